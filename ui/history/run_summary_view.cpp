// See run_summary_view.h.
#include "ui/history/run_summary_view.h"
#include "ui/widgets/run_words.h"

#include "ui/dashboards/panel.h"

#include <qcustomplot.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QVBoxLayout>

namespace trellis::ui {

RunSummaryView::RunSummaryView(QWidget *parent)
    : QWidget(parent), m_title(new QLabel(this)), m_headline(new QLabel(this)), m_figures(new QLabel(this)), m_note(new QLabel(this)),
      m_hint(new QLabel(this)), m_events(new QListWidget(this)), m_loss(dashboards::makePlot(tr("Loss"), tr("loss"), this)),
      m_body(new QWidget(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_hint, 1);
    auto *body = new QVBoxLayout(m_body);
    body->setContentsMargins(0, 0, 0, 0);
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.3);
    big.setBold(true);
    m_title->setFont(big);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    for (QLabel *l : {m_headline, m_figures, m_note}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    body->addWidget(m_title);
    body->addWidget(m_headline);
    body->addWidget(m_figures);
    body->addWidget(m_note);
    m_loss->setMinimumHeight(160);
    m_loss->legend->setVisible(false); // one line: the title says what it is
    body->addWidget(m_loss, 2);
    auto *eventsTitle = new QLabel(tr("Events"), m_body);
    eventsTitle->setObjectName(QStringLiteral("eventsTitle"));
    body->addWidget(eventsTitle);
    m_events->setAlternatingRowColors(true);
    body->addWidget(m_events, 1);
    layout->addWidget(m_body, 1);
    clear(tr("Select a run to see its summary here; select two or more and press Compare to set them side by side."));
}

void RunSummaryView::clear(const QString &hint)
{
    m_id = 0;
    m_runId.clear();
    m_hint->setText(hint);
    m_hint->show();
    m_body->hide();
}

QString RunSummaryView::headline() const { return m_headline->text(); }

QString RunSummaryView::details() const { return m_note->text(); }

int RunSummaryView::eventCount() const { return m_events->count(); }

int RunSummaryView::lossPoints() const { return m_loss->graphCount() ? m_loss->graph(0)->dataCount() : 0; }

// Where the run ran and how it came to be here: "local, launched from host-a", "collected,
// watched from host-b", …
QString RunSummaryView::hostLine(const launcher::RunSummary &r)
{
    if (r.launcherHost.isEmpty())
        return r.target == QLatin1String("collected") ? kindText(r.kind) : tr("%1, %2").arg(r.target, kindText(r.kind));
    switch (r.kind) {
    case launcher::RunKind::Collected: return tr("collected, watched from %1").arg(r.launcherHost);
    case launcher::RunKind::Simulated: return tr("simulated ranks, from %1").arg(r.launcherHost);
    case launcher::RunKind::Adopted: return tr("%1, adopted by %2").arg(r.target, r.launcherHost);
    case launcher::RunKind::Launched: break;
    }
    return tr("%1, launched from %2").arg(r.target, r.launcherHost);
}

void RunSummaryView::showSummary(const launcher::RunSummary &r)
{
    if (r.id != m_id) {
        m_events->clear();
        m_loss->clearGraphs();
        m_loss->replot(QCustomPlot::rpQueuedReplot);
    }
    m_id = r.id;
    m_runId = r.runId;
    m_hint->hide();
    m_body->show();
    m_title->setText(r.name.isEmpty() ? r.runId : QStringLiteral("%1 — %2").arg(r.name, r.runId));
    QStringList head;
    if (!r.planName.isEmpty())
        head << tr("plan %1").arg(r.planName);
    head << (r.worldSize == 1 ? tr("1 rank") : tr("%1 ranks").arg(r.worldSize));
    if (!r.layout.isEmpty())
        head << r.layout;
    if (!r.precision.isEmpty())
        head << r.precision;
    head << hostLine(r);
    m_headline->setText(head.join(QStringLiteral(" · ")));
    QStringList figures;
    const QColor colour = statusColour(r.status);
    const QString status = statusText(r.status).toHtmlEscaped();
    figures << (colour.isValid() ? QStringLiteral("<b style='color:%1'>%2</b>").arg(colour.name(), status) : status);
    figures << tr("step %1 of %2").arg(r.stepsDone).arg(r.totalSteps);
    if (r.stepsDone > 0)
        figures << tr("final loss %1").arg(r.lastLoss, 0, 'f', 4);
    if (r.tokensPerS > 0)
        figures << tr("%1 tokens/s").arg(QLocale().toString(r.tokensPerS, 'f', 0));
    if (r.mfu >= 0)
        figures << tr("MFU %1%").arg(r.mfu * 100, 0, 'f', 1);
    if (const qint64 ms = r.durationMs(); ms >= 0)
        figures << tr("%1 s").arg(ms / 1000.0, 0, 'f', 1);
    if (r.startedAt.isValid())
        figures << tr("started %1").arg(QLocale().toString(r.startedAt.toLocalTime(), QLocale::ShortFormat));
    QString text = figures.join(QStringLiteral(" · "));
    if (!r.error.isEmpty())
        text += QStringLiteral("<br><span style='color:#b00020'>%1</span>").arg(r.error.section(QLatin1Char('\n'), 0, 0).toHtmlEscaped());
    m_figures->setText(text);
    QStringList extra;
    if (!r.tags.isEmpty())
        extra << tr("Tags: %1").arg(r.tags.join(QStringLiteral(", ")).toHtmlEscaped());
    if (!r.note.isEmpty())
        extra << r.note.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    if (!r.owner.isEmpty())
        extra << tr("Recorded by %1").arg(r.owner.toHtmlEscaped());
    if (const qsizetype colon = r.filesAt.indexOf(QLatin1Char(':')); colon > 0)
        extra << tr("Files: %1 on %2").arg(r.filesAt.mid(colon + 1).toHtmlEscaped(), r.filesAt.left(colon).toHtmlEscaped());
    m_note->setText(extra.join(QStringLiteral("<br>")));
    m_note->setVisible(!extra.isEmpty());
}

void RunSummaryView::showRun(const launcher::RunData &run)
{
    if (run.run.id != m_id)
        return; // an answer for a run no longer selected
    // The plan's model, when the record has it, after the layout.
    const QJsonObject plan = QJsonDocument::fromJson(run.planJson.toUtf8()).object();
    const QJsonObject model = plan.value(QStringLiteral("model")).toObject();
    if (const QString preset = model.value(QStringLiteral("preset")).toString(); !preset.isEmpty() && !m_headline->text().contains(preset))
        m_headline->setText(tr("model %1 · %2").arg(preset, m_headline->text()));
    m_events->clear();
    const int first = std::max<int>(0, static_cast<int>(run.events.size()) - 50);
    for (int i = static_cast<int>(run.events.size()) - 1; i >= first; --i) {
        const launcher::EventRow &e = run.events[i];
        auto *item = new QListWidgetItem(QStringLiteral("%1  step %2  %3: %4")
                                             .arg(e.at.toLocalTime().toString(QStringLiteral("HH:mm:ss")))
                                             .arg(e.step)
                                             .arg(e.kind, e.message.section(QLatin1Char('\n'), 0, 0)),
                                         m_events);
        item->setToolTip(e.message);
    }
    if (run.events.isEmpty())
        m_events->addItem(tr("(no events)"));
}

void RunSummaryView::showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    if (!snapshot || m_id == 0)
        return;
    const auto it = snapshot->metrics.find(launcher::telemetry::Metric::Loss);
    m_loss->clearGraphs();
    if (it != snapshot->metrics.end()) {
        QVector<double> steps, values;
        if (!it->second.lines.empty()) {
            const launcher::telemetry::Line &line = it->second.lines.front(); // rank 0 (every rank reports the loss)
            steps = QVector<double>(line.steps.begin(), line.steps.end());
            values = QVector<double>(line.values.begin(), line.values.end());
        } else {
            for (const auto &p : it->second.band) {
                steps << static_cast<double>(p.step);
                values << p.median;
            }
        }
        QCPGraph *g = m_loss->addGraph();
        g->setPen(QPen(dashboards::rankColour(0), 1.5));
        g->setData(steps, values, true);
        m_loss->rescaleAxes();
        m_loss->yAxis->scaleRange(1.1);
    }
    m_loss->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace trellis::ui
