// Shows the open plan: a summary of what will run (model, parallelism, batch, training) and the
// plan document itself (read-only; the editor and the mesh canvas change it).
#pragma once

#include "backend/plan/plan.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTreeWidget;
class QTabWidget;

namespace trellis::ui {

class PlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlanPanel(QWidget *parent = nullptr);
    // unsupported: why trellis-trainer cannot run the plan yet (one line shown, all in its tooltip).
    void showPlan(const plan::Plan &plan, const QString &path, const QStringList &warnings,
                  const QStringList &unsupported = {});
    void showError(const QString &path, const QStringList &errors);

private:
    QLabel *m_title;
    QTreeWidget *m_summary;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_json;
};

} // namespace trellis::ui
