// The plan being edited in the workbench: one trellis.plan/1 document, its file and its undo
// history (docs/architecture.md §4, launcher/document). Every edit is an undo command on this document: one
// generic "set a field" command in Tiled's manner (a field path and a value, merged while the same
// field is edited in a row, as typing into a spin box does), and one structural command for what
// changes more than a field (a planner result applied, an import, a node removed). Commands keep the
// whole plan before and after, so undoing any sequence gives back the original byte for byte.
// Qt Core + Qt Gui (QUndoStack) only: the editor's widgets live in ui/plan.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <QObject>
#include <QString>

class QUndoStack;

namespace trellis::launcher::document {

class PlanDocument : public QObject {
    Q_OBJECT
public:
    explicit PlanDocument(QObject *parent = nullptr);
    ~PlanDocument() override;

    const plan::Plan &plan() const { return m_plan; }
    // planToJson(plan()): what Save writes.
    QString json() const;
    // The file it was opened from or saved to; empty for a new document never saved.
    QString filePath() const { return m_filePath; }
    // The file's name, or "Untitled".
    QString displayName() const;
    bool isModified() const;
    QUndoStack *undoStack() const { return m_undo; }
    // validatePlan(plan()), refreshed on every change: errors and warnings with their field paths.
    const plan::Diagnostics &diagnostics() const { return m_diagnostics; }
    bool hasErrors() const;
    // Counts every change (edit, undo, redo, open, new): a result computed for one revision is
    // stale once the revision moves on.
    quint64 revision() const { return m_revision; }
    // The value at a field path as JSON text ("null" for an optional field left out); empty for
    // a path no plan has.
    QString field(const QString &path) const;

    // --- Edits: each one undo step. A refused value changes nothing and returns why. ---------
    // `value`: JSON text or a bare word (plan::withPlanField). Setting a field to what it already
    // holds is no step at all.
    QString setField(const QString &path, const QString &value);
    // Several fields as one step (e.g. dp and tp changed together from the mesh), named `action`.
    QString setFields(const QList<QPair<QString, QString>> &assignments, const QString &action);
    // A structural change: the whole plan replaced (planner result, import), one step named `action`.
    void replacePlan(const plan::Plan &plan, const QString &action);
    // Removes node `index` of the cluster (one step); false when out of range or the last node.
    bool removeNode(int index);

    // Imports as one structural step ("Import DeepSpeed config", "Import Megatron-LM arguments"):
    // what the foreign configuration governs replaces the plan's, the rest stays (backend/plan/frameworks/framework_configs.h).
    // Returns the errors (nothing changed) or empty; the importer's warnings go to `warnings`.
    QString importDeepSpeed(const QByteArray &configJson, QStringList *warnings = nullptr);
    QString importMegatron(const QString &argumentLine, QStringList *warnings = nullptr);
    // The plan as a DeepSpeed config (indented JSON) or a Megatron-LM argument line.
    QString exportDeepSpeed() const;
    QString exportMegatron() const;

    // --- Documents: not undo steps; on failure the open document is left as it was. ----------
    void newDocument(const plan::Plan &plan);
    // Reads and parses `path` (syntax, schema, types, presets); a plan that parses but fails
    // validation opens, with its problems in diagnostics(), so it can be fixed here.
    QString open(const QString &path);
    // Writes plan() to filePath() atomically (a temporary file renamed over it).
    QString save();
    // Writes to `path` and makes it the document's file. Relative data and checkpoint paths are
    // relative to the plan's folder, so saving into another folder rewrites them for the new one
    // (one undo step, "Rebase relative paths").
    QString saveAs(const QString &path);

signals:
    // plan() changed: an edit, undo, redo, open or new.
    void changed();
    void modifiedChanged(bool modified);
    void filePathChanged(const QString &path);

private:
    friend class PlanCommand;
    void apply(const plan::Plan &plan);
    void push(const plan::Plan &next, const QString &action, const QString &mergeKey); // no step when unchanged

    plan::Plan m_plan;
    plan::Diagnostics m_diagnostics;
    QString m_filePath;
    quint64 m_revision = 0;
    QUndoStack *m_undo;
};

} // namespace trellis::launcher::document
