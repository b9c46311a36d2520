// Shows the loaded plan: a summary of what will run (model, mesh, batch, training) and the plan
// document itself. Editing with undo commands arrives with the plan editor.
#pragma once

#include "plan/plan.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTreeWidget;

namespace trellis::ui {

class PlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlanPanel(QWidget *parent = nullptr);
    void showPlan(const plan::Plan &plan, const QString &path, const QStringList &warnings);
    void showError(const QString &path, const QStringList &errors);

private:
    QLabel *m_title;
    QTreeWidget *m_summary;
    QPlainTextEdit *m_json;
};

} // namespace trellis::ui
