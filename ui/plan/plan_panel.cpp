// See plan_panel.h.
#include "ui/plan/plan_panel.h"

#include "backend/plan/plan_json.h"
#include "ui/widgets/tree_section.h"

#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace trellis::ui {

PlanPanel::PlanPanel(QWidget *parent)
    : QWidget(parent), m_title(new QLabel(this)), m_summary(new QTreeWidget(this)), m_tabs(new QTabWidget(this)),
      m_json(new QPlainTextEdit(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_title->setWordWrap(true);
    m_title->setTextFormat(Qt::RichText);
    layout->addWidget(m_title);
    auto *split = new QSplitter(Qt::Vertical, this);
    m_summary->setColumnCount(2);
    m_summary->setHeaderLabels({tr("Setting"), tr("Value")});
    m_summary->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_summary->setRootIsDecorated(true);
    m_json->setReadOnly(true);
    m_json->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_json->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_tabs->addTab(m_json, tr("Document"));
    split->addWidget(m_summary);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
}

void PlanPanel::showPlan(const plan::Plan &p, const QString &path, const QStringList &warnings, const QStringList &unsupported)
{
    QString title = tr("<b>%1</b><br><small>%2</small>")
                        .arg((p.name.empty() ? tr("(unnamed plan)") : QString::fromStdString(p.name)).toHtmlEscaped(),
                             QFileInfo(path).fileName().toHtmlEscaped());
    for (const QString &w : warnings)
        title += QStringLiteral("<br><span style='color:#a36a00'>%1</span>").arg(w.toHtmlEscaped());
    if (!unsupported.isEmpty())
        title += QStringLiteral("<br><span style='color:#a36a00'>%1</span>")
                     .arg(tr("Estimate only: trellis-trainer cannot run this plan yet (%n reason(s); hover for them)", nullptr,
                             static_cast<int>(unsupported.size()))
                              .toHtmlEscaped());
    m_title->setText(title);
    m_title->setToolTip(unsupported.join(QLatin1Char('\n')));

    m_summary->clear();
    auto section = [this](const QString &name) { return addTreeSection(m_summary, name); };
    auto add = [](QTreeWidgetItem *parent, const QString &k, const QString &v) { new QTreeWidgetItem(parent, {k, v}); };
    const auto &m = p.model;
    auto *model = section(tr("Model"));
    if (!m.preset.empty())
        add(model, tr("preset"), QString::fromStdString(m.preset));
    add(model, tr("architecture"), QString::fromStdString(m.arch));
    if (m.moe.experts > 0)
        add(model, tr("experts"), tr("%1, top %2").arg(m.moe.experts).arg(m.moe.topK));
    add(model, tr("layers × hidden"), QStringLiteral("%1 × %2").arg(m.layers).arg(m.hidden));
    add(model, tr("heads (kv)"), QStringLiteral("%1 (%2)").arg(m.heads).arg(m.kvHeads));
    add(model, tr("ffn"), QString::number(m.ffn));
    add(model, tr("sequence"), QString::number(m.seqLen));
    add(model, tr("vocabulary"), QString::number(m.vocab));
    const auto &q = p.parallel;
    auto *par = section(tr("Parallelism"));
    add(par, tr("ranks"), QStringLiteral("%1 = dp %2 · tp %3 · pp %4 · cp %5").arg(q.worldSize()).arg(q.dp).arg(q.tp).arg(q.pp).arg(q.cp));
    if (q.ep > 1)
        add(par, tr("expert parallel"), QString::number(q.ep));
    if (q.pp > 1)
        add(par, tr("schedule"), QString::fromStdString(q.schedule) + (q.virtualStages > 1 ? tr(", %1 virtual stages").arg(q.virtualStages) : QString()));
    add(par, tr("recompute"), QString::fromUtf8(plan::toString(q.recompute)));
    add(par, tr("ZeRO stage"), QString::number(q.zero));
    add(par, tr("micro-batch"), tr("%1 × %2 micro-batches").arg(q.microBatchSize).arg(q.microBatches));
    add(par, tr("global batch"), tr("%1 sequences").arg(q.globalBatch()));
    add(par, tr("precision"), QString::fromUtf8(plan::toString(q.precision)));
    auto *cl = section(tr("Cluster"));
    for (const auto &n : p.cluster.nodes)
        add(cl, QString::fromStdString(n.host), tr("%1 slots, %2").arg(n.slotCount).arg(QString::fromUtf8(plan::toString(n.device))));
    const auto &t = p.training;
    auto *tr_ = section(tr("Training"));
    add(tr_, tr("steps"), QString::number(t.steps));
    add(tr_, tr("learning rate"), tr("%1 → %2, warm-up %3").arg(t.lr).arg(t.minLr).arg(t.warmupSteps));
    add(tr_, tr("data"), QStringLiteral("%1: %2").arg(QString::fromStdString(t.data.source), QString::fromStdString(t.data.path)));
    add(tr_, tr("seed"), QString::number(t.seed));
    m_json->setPlainText(QString::fromStdString(plan::planToJson(p)));
}

void PlanPanel::showError(const QString &path, const QStringList &errors)
{
    m_title->setText(tr("<b>Plan not loaded</b><br><small>%1</small>").arg(path.toHtmlEscaped()));
    m_summary->clear();
    for (const QString &e : errors) {
        auto *item = new QTreeWidgetItem(m_summary, {e});
        item->setForeground(0, QColor(0xb0, 0x00, 0x20));
        item->setFirstColumnSpanned(true);
    }
    m_json->clear();
}

} // namespace trellis::ui
