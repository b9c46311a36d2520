// Compare plans: the plan pinned (with its estimate) beside the plan as it is now — the fields that
// differ (plan::planDifferences, document order) and the predicted step time and its breakdown,
// tokens/s, MFU, cost, peak memory and memory per pipeline stage of each, with the change. The
// current side follows every edit (dimmed while its estimate is on its way or the plan has errors);
// the pinned side stays until unpinned. "Use pinned plan" brings the pinned plan back as one undo
// step (through planChosen).
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace trellis::ui::estimate {

class PlanComparison : public QWidget {
    Q_OBJECT
public:
    explicit PlanComparison(QWidget *parent = nullptr);

    void pin(const plan::Plan &plan, const plan::Estimate &estimate);
    void unpin();
    bool isPinned() const { return m_pinned.has_value(); }
    const std::optional<plan::Plan> &pinnedPlan() const { return m_pinned; }
    // The plan now and its estimate (none while the plan has errors); `current`: the estimate
    // belongs to this plan (false: dim it, it is the previous one).
    void showCurrent(const std::optional<plan::Plan> &plan, const std::optional<plan::Estimate> &estimate, bool current);
    // Whether the pin button can pin something now.
    void setPinnable(bool pinnable);

    QTreeWidget *table() const { return m_table; }
    QPushButton *pinButton() const { return m_pinButton; }
    QPushButton *restoreButton() const { return m_restoreButton; }

signals:
    void pinRequested();
    void planChosen(const plan::Plan &plan);

private:
    void rebuild();

    std::optional<plan::Plan> m_pinned;
    std::optional<plan::Estimate> m_pinnedEstimate;
    std::optional<plan::Plan> m_plan;
    std::optional<plan::Estimate> m_estimate;
    bool m_current = false;
    QLabel *m_header;
    QPushButton *m_pinButton;
    QPushButton *m_restoreButton;
    QTreeWidget *m_table;
};

} // namespace trellis::ui::estimate
