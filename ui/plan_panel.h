// Shows the loaded plan: a summary of what will run (model, parallelism, batch, training), the
// device mesh (ranks on the cluster's nodes) and the plan document itself. Editing with undo
// commands arrives with the plan editor.
#pragma once

#include "plan/plan.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTreeWidget;
class QTabWidget;

namespace trellis::ui {

class MeshView;

class PlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlanPanel(QWidget *parent = nullptr);
    // unsupported: why trellis-trainer cannot run the plan yet (one line shown, all in its tooltip).
    void showPlan(const plan::Plan &plan, const QString &path, const QStringList &warnings,
                  const QStringList &unsupported = {});
    void showError(const QString &path, const QStringList &errors);
    MeshView *meshView() const { return m_mesh; }

private:
    QLabel *m_title;
    QTreeWidget *m_summary;
    QTabWidget *m_tabs;
    MeshView *m_mesh;
    QPlainTextEdit *m_json;
};

} // namespace trellis::ui
