// See plan_comparison.h.
#include "ui/estimate/plan_comparison.h"

#include "backend/plan/plan_fields.h"
#include "ui/estimate/estimate_format.h"
#include "ui/widgets/tree_section.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace trellis::ui::estimate {

PlanComparison::PlanComparison(QWidget *parent)
    : QWidget(parent), m_header(new QLabel(this)), m_pinButton(new QPushButton(tr("Pin this plan"), this)),
      m_restoreButton(new QPushButton(tr("Use pinned plan"), this)), m_table(new QTreeWidget(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    auto *row = new QHBoxLayout;
    row->addWidget(m_pinButton);
    row->addWidget(m_restoreButton);
    row->addStretch(1);
    layout->addLayout(row);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    m_table->setHeaderLabels({tr("What"), tr("Pinned"), tr("Now"), tr("Change")});
    m_table->setRootIsDecorated(true);
    m_table->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(m_table, 1);
    m_pinButton->setToolTip(tr("Keep the plan as it is now (with its estimate) to compare your edits against"));
    m_restoreButton->setToolTip(tr("Put the pinned plan back in the editor (one undo step)"));
    connect(m_pinButton, &QPushButton::clicked, this, [this] {
        if (isPinned())
            unpin();
        else
            emit pinRequested();
    });
    connect(m_restoreButton, &QPushButton::clicked, this, [this] {
        if (m_pinned)
            emit planChosen(*m_pinned);
    });
    setPinnable(false);
    rebuild();
}

void PlanComparison::pin(const plan::Plan &plan, const plan::Estimate &estimate)
{
    m_pinned = plan;
    m_pinnedEstimate = estimate;
    rebuild();
}

void PlanComparison::unpin()
{
    m_pinned.reset();
    m_pinnedEstimate.reset();
    rebuild();
}

void PlanComparison::setPinnable(bool pinnable) { m_pinButton->setEnabled(isPinned() || pinnable); }

void PlanComparison::showCurrent(const std::optional<plan::Plan> &plan, const std::optional<plan::Estimate> &estimate, bool current)
{
    m_plan = plan;
    m_estimate = estimate;
    m_current = current;
    rebuild();
}

void PlanComparison::rebuild()
{
    m_pinButton->setText(isPinned() ? tr("Unpin") : tr("Pin this plan"));
    m_restoreButton->setEnabled(isPinned() && (!m_plan || !(*m_plan == *m_pinned)));
    m_table->clear();
    if (!m_pinned) {
        m_header->setText(tr("<i>Pin the plan to compare it with your edits: the fields that differ and the predicted memory, "
                             "step time, tokens/s, MFU and cost of both.</i>"));
        return;
    }
    QString header = tr("<b>%1</b> pinned").arg(QString::fromStdString(m_pinned->name).toHtmlEscaped());
    if (!m_plan)
        header += tr(" · <i>the plan now has errors: no estimate</i>");
    else if (!m_current)
        header += tr(" · <i>estimating the plan now…</i>");
    m_header->setText(header);

    auto section = [this](const QString &title) { return addTreeSection(m_table, title); };
    const QColor stale = palette().color(QPalette::PlaceholderText);
    auto row = [&](QTreeWidgetItem *parent, const QString &what, const QString &pinned, const QString &now, const QString &change) {
        auto *item = new QTreeWidgetItem(parent, {what, pinned, now, change});
        for (int c = 1; c <= 3; ++c)
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        if (!m_current) {
            item->setForeground(2, stale);
            item->setForeground(3, stale);
        }
        return item;
    };

    auto *fields = section(tr("Plan fields that differ"));
    if (m_plan) {
        const auto differences = plan::planDifferences(*m_pinned, *m_plan);
        for (const auto &d : differences)
            new QTreeWidgetItem(fields, {QString::fromStdString(d.path), QString::fromStdString(d.before), QString::fromStdString(d.after), {}});
        if (differences.empty())
            new QTreeWidgetItem(fields, {tr("(none: the plan is the pinned one)")});
        fields->setText(0, tr("Plan fields that differ (%1)").arg(differences.size()));
    }

    const plan::Estimate &a = *m_pinnedEstimate;
    const plan::Estimate *b = m_estimate ? &*m_estimate : nullptr;
    auto *predicted = section(tr("Predicted"));
    auto timeRow = [&](const QString &what, double plan::Estimate::*field) {
        row(predicted, what, duration(a.*field), b ? duration(b->*field) : QString(), b ? percentChange(a.*field, b->*field) : QString());
    };
    row(predicted, tr("tokens/s"), rate(a.tokensPerS), b ? rate(b->tokensPerS) : QString(), b ? percentChange(a.tokensPerS, b->tokensPerS) : QString());
    timeRow(tr("step time"), &plan::Estimate::stepMs);
    timeRow(tr("  compute"), &plan::Estimate::computeMs);
    timeRow(tr("  exposed communication"), &plan::Estimate::exposedCommMs);
    timeRow(tr("  pipeline bubble"), &plan::Estimate::bubbleMs);
    auto mfu = [](const plan::Estimate &e) { return e.mfu > 0 ? QStringLiteral("%1%").arg(100 * e.mfu, 0, 'f', 1) : tr("n/a (CPU)"); };
    row(predicted, tr("MFU"), mfu(a), b ? mfu(*b) : QString(), b && a.mfu > 0 ? percentChange(a.mfu, b->mfu) : QString());
    row(predicted, tr("cost a run"), QString::number(a.costPerRun, 'f', 2), b ? QString::number(b->costPerRun, 'f', 2) : QString(),
        b ? percentChange(a.costPerRun, b->costPerRun) : QString());
    const double peakA = static_cast<double>(a.peakMemory()), peakB = b ? static_cast<double>(b->peakMemory()) : 0;
    row(predicted, tr("peak memory a rank (GB)"), gigabytes(peakA), b ? gigabytes(peakB) : QString(), b ? percentChange(peakA, peakB) : QString());

    auto *memory = section(tr("Memory per pipeline stage (GB)"));
    const std::size_t stages = std::max(a.memory.size(), b ? b->memory.size() : std::size_t{0});
    for (std::size_t s = 0; s < stages; ++s) {
        const bool inA = s < a.memory.size(), inB = b && s < b->memory.size();
        const double ma = inA ? static_cast<double>(a.memory[s].total()) : 0, mb = inB ? static_cast<double>(b->memory[s].total()) : 0;
        row(memory, tr("stage %1").arg(s), inA ? gigabytes(ma) : QStringLiteral("—"), inB ? gigabytes(mb) : QStringLiteral("—"),
            inA && inB ? percentChange(ma, mb) : QString());
    }
}

} // namespace trellis::ui::estimate
