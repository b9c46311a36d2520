// See compare_view.h.
#include "ui/history/compare_view.h"
#include "ui/widgets/run_words.h"

#include "ui/dashboards/panel.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace trellis::ui {

CompareView::CompareView(QWidget *parent)
    : QWidget(parent), m_loss(dashboards::makePlot(tr("Loss (rank 0)"), tr("loss"), this)),
      m_tokens(dashboards::makePlot(tr("Throughput (job)"), tr("tokens/s"), this)), m_table(new QTableWidget(this)),
      m_hint(new QLabel(tr("Select two or more runs in the list (Ctrl+click) and press Compare: their losses and "
                           "throughput overlaid, and a table of what differs."), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_hint, 1);
    auto *split = new QSplitter(Qt::Vertical, this);
    m_split = split;
    split->hide();
    auto *charts = new QWidget(split);
    auto *chartLayout = new QHBoxLayout(charts);
    chartLayout->setContentsMargins(0, 0, 0, 0);
    chartLayout->addWidget(m_loss);
    chartLayout->addWidget(m_tokens);
    split->addWidget(charts);
    split->addWidget(m_table);
    layout->addWidget(split);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void CompareView::show(const launcher::Comparison &c)
{
    m_hint->hide();
    m_split->show();
    auto overlay = [](QCustomPlot *plot, const QList<launcher::OverlaySeries> &series) {
        plot->clearGraphs();
        for (int i = 0; i < series.size(); ++i) {
            QCPGraph *g = plot->addGraph();
            g->setName(series[i].runId);
            g->setPen(QPen(dashboards::rankColour(i), 1.5));
            g->setData(series[i].steps, series[i].values, true);
        }
        plot->rescaleAxes();
        plot->yAxis->scaleRange(1.1); // a line at the extreme stays off the axis
        plot->replot(QCustomPlot::rpQueuedReplot);
    };
    overlay(m_loss, c.loss);
    overlay(m_tokens, c.tokensPerS);

    const QStringList labels{tr("plan"), tr("status"), tr("ranks"), tr("steps"), tr("final loss"), tr("tokens/s (job)"),
                             tr("step ms (slowest rank)"), tr("compute ms"), tr("exposed comm ms"), tr("bubble ms"),
                             tr("idle ms"), tr("bus GB/s"), tr("peak RSS MiB")};
    const int rows = static_cast<int>(labels.size() + (c.differences.isEmpty() ? 0 : 1 + c.differences.size()));
    m_table->clear();
    m_table->setRowCount(rows);
    m_table->setColumnCount(static_cast<int>(c.figures.size()) + 1);
    QStringList header{QString()};
    for (const auto &f : c.figures)
        header << f.runId;
    m_table->setHorizontalHeaderLabels(header);
    auto set = [&](int row, int column, const QString &text, bool bold = false) {
        // A long value (a cluster's node list) is cut, whole in its tooltip, so no column grows
        // past the window and hides the runs beside it.
        auto *item = new QTableWidgetItem(text.size() > 48 ? text.left(45) + QStringLiteral("…") : text);
        if (text.size() > 48)
            item->setToolTip(text);
        if (bold) {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
        }
        m_table->setItem(row, column, item);
    };
    for (int r = 0; r < labels.size(); ++r)
        set(r, 0, labels[r], true);
    for (int i = 0; i < c.figures.size(); ++i) {
        const auto &f = c.figures[i];
        const QString values[] = {f.name, statusText(f.status), QString::number(f.worldSize), QString::number(f.steps),
                                  QString::number(f.finalLoss, 'f', 4), QString::number(f.tokensPerS, 'f', 0),
                                  QString::number(f.stepMs, 'f', 1), QString::number(f.computeMs, 'f', 1),
                                  QString::number(f.exposedCommMs, 'f', 1), QString::number(f.bubbleMs, 'f', 1),
                                  QString::number(f.idleMs, 'f', 1), QString::number(f.busGbps, 'f', 2),
                                  QString::number(f.peakRss >> 20)};
        for (int r = 0; r < labels.size(); ++r)
            set(r, i + 1, values[r]);
    }
    if (!c.differences.isEmpty()) {
        int row = static_cast<int>(labels.size());
        set(row++, 0, tr("plan differences"), true);
        for (const auto &d : c.differences) {
            set(row, 0, d.field);
            for (int i = 0; i < d.values.size(); ++i)
                set(row, i + 1, d.values[i]);
            ++row;
        }
    }
}

} // namespace trellis::ui
