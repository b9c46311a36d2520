// The plan editor: every field of the plan document as a control, built from the one field table
// (field_table.h), grouped by section — model, cluster (preset, node count, the node table, link
// tiers), parallelism, training, telemetry, launch. Each change is a set-field undo command on the
// PlanDocument; the controls follow the document back (undo, redo, open). Validation runs on every
// edit: each problem appears beside the control of its field and in the problems list, which
// selects that control when clicked. The world size, the cluster's slots and the global batch are
// shown above as you edit.
#pragma once

#include <QHash>
#include <QWidget>

#include <vector>

class QFormLayout;
class QLabel;
class QListWidget;
class QScrollArea;
class QToolButton;
class QSpinBox;
class QTableWidget;

namespace trellis::launcher::document {
class PlanDocument;
}

namespace trellis::ui::plan_editor {

struct Field;

class PlanEditor : public QWidget {
    Q_OBJECT
public:
    explicit PlanEditor(launcher::document::PlanDocument *document, QWidget *parent = nullptr);

    // The control of a field path as the table names it (nullptr for none).
    QWidget *controlFor(const QString &fieldPath) const { return m_controls.value(fieldPath); }
    // The message shown under that control (hidden when the field has no problem).
    QLabel *messageFor(const QString &fieldPath) const { return m_messages.value(fieldPath); }
    QListWidget *problems() const { return m_problems; }
    QLabel *summary() const { return m_summary; }
    QLabel *ownTrainerNote() const { return m_trainerNote; } // "Not used: …" while the plan does not use it
    QTableWidget *nodeTable() const { return m_nodes; }
    // Shows and focuses the control of a diagnostic's path (the node's row for a node field).
    void focusField(const QString &diagnosticPath);
    // Adds `count` copies of the last node: one undo step.
    void addNodes(int count);

signals:
    // A value the document refused (wrong type, unknown preset): the control is put back.
    void editRefused(const QString &message);

private:
    void build();
    // build()'s steps: the scroll area's content, a group box per section with a row per field.
    QWidget *createSections();
    void refreshTrainerSection();
    void addFieldRow(const Field &field, QFormLayout *form, QWidget *content);
    QWidget *createControl(const Field &field, QWidget *cell); // the field's control, wired to commit()
    QWidget *createNodeTable(QWidget *cell); // the node table with its add and remove buttons
    void refresh();
    void refreshControl(const Field &field, QWidget *control);
    void refreshEnabled();
    void refreshSummary();
    void refreshNodes();
    void showDiagnostics();
    void commit(const QString &path, const QString &jsonValue);

    launcher::document::PlanDocument *m_document;
    QHash<QString, QWidget *> m_controls;
    QHash<QString, QLabel *> m_messages;
    QScrollArea *m_scroll = nullptr;
    ::QToolButton *m_trainerToggle = nullptr; // the own-trainer section, last, folded while unused
    QWidget *m_trainerBody = nullptr;
    QLabel *m_trainerNote = nullptr;          // under the toggle, wrapped: whether the plan uses it
    QLabel *m_summary = nullptr;
    QListWidget *m_problems = nullptr;
    QTableWidget *m_nodes = nullptr;
    QSpinBox *m_addCount = nullptr;
    std::vector<std::string> m_shownNodes; // what the node table shows, to rebuild only on change
    bool m_refreshing = false;
};

} // namespace trellis::ui::plan_editor
