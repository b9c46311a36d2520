// The mesh as the canvas of the plan: the mesh view (ui/plan/mesh_view.h) of the document's plan in a
// scroll area, with the axis its ranks are coloured by, a stepper per parallel degree (dp, tp, pp,
// cp, ep) and zoom (−, +, fit; Ctrl+wheel over the mesh). A stepper's change is the same set-field
// undo command the editor makes; with "keep the world size" on, changing tp, pp or cp also sets dp
// so the ranks still fill the same devices (one undo step for both). The steppers step through the
// degrees that can be valid (tp among the divisors of the heads, pp up to the layers, ep among the
// divisors of dp and of the experts, and with the world size kept, only degrees that divide it);
// typing any value is still possible and gets the validator's message. Clicking a rank shows its
// coordinates and groups below the mesh.
#pragma once

#include "backend/plan/plan.h"

#include <QHash>
#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QScrollArea;
class QSpinBox;
class QToolButton;

namespace trellis::launcher::document {
class PlanDocument;
}

namespace trellis::ui {
class MeshView;
}

namespace trellis::ui::plan_editor {

class MeshCanvas : public QWidget {
    Q_OBJECT
public:
    explicit MeshCanvas(launcher::document::PlanDocument *document, QWidget *parent = nullptr);

    MeshView *view() const { return m_view; }
    QComboBox *axisBox() const { return m_axis; }
    // The stepper of "dp", "tp", "pp", "cp" or "ep" (nullptr for another name).
    QSpinBox *stepper(const QString &axis) const { return m_steppers.value(axis); }
    QCheckBox *keepWorldBox() const { return m_keepWorld; }
    QLabel *selectionLabel() const { return m_selection; }

    // The degrees the stepper of `axis` steps through for `plan`, ascending.
    static std::vector<int> offeredDegrees(const plan::Plan &plan, const QString &axis, bool keepWorld);

signals:
    void editRefused(const QString &message);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void refresh();
    void changeDegree(const QString &axis, int value);
    void showSelection(int rank);
    void showZoom();

    launcher::document::PlanDocument *m_document;
    MeshView *m_view;
    QScrollArea *m_scroll;
    QComboBox *m_axis;
    QHash<QString, QSpinBox *> m_steppers;
    QCheckBox *m_keepWorld;
    QToolButton *m_zoomOut, *m_zoomIn, *m_fit;
    QLabel *m_zoomLabel;
    QLabel *m_selection;
    bool m_refreshing = false;
};

} // namespace trellis::ui::plan_editor
