// The plan editor's one table of fields: each editable field path of a trellis.plan/1 document,
// its section, label, kind of control and limits. The editor builds its controls from it, and
// controlPathFor() maps every path a diagnostic can name (plan::validatePlan, the loader) onto the
// control that shows it: node fields onto the node table, "cluster.links" onto the link controls,
// "parallel" (the rank count) onto dp. A test checks every validator path lands on a control.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace trellis::ui::plan_editor {

enum class Section { Trainer, Model, Cluster, Parallel, Training, Telemetry, Launch };
enum class Kind {
    Integer,   // spin box within [minimum, maximum]
    Number,    // line edit taking a number (learning rates, bandwidths)
    OptionalNumber, // as Number; empty means "left out" (null)
    Choice,    // combo box of `choices`
    Flag,      // check box
    Text,      // line edit taking a string
    JsonText,  // line edit taking JSON (a list of strings, or an object of strings); empty removes a trainer.* field
    Nodes,     // the cluster's node table
};

struct Field {
    QString path;
    Section section;
    const char *label; // source text, translated by label()
    Kind kind;
    int minimum = 0;
    int maximum = 0;
    QStringList choices;     // for Choice
    const char *tip = nullptr; // source text, translated by tip()

    QString labelText() const;
    QString tipText() const;
};

// Every field the editor shows, in the order it shows them.
const std::vector<Field> &fields();
// The field at `path` in fields(), or nullptr.
const Field *fieldAt(const QString &path);
// The field whose control shows a diagnostic about `diagnosticPath`; empty when none does.
QString controlPathFor(const QString &diagnosticPath);
// The node a diagnostic path is about ("cluster.nodes[3].host" → 3), or -1.
int nodeIndexOf(const QString &diagnosticPath);
QString sectionTitle(Section section);
// The divisors of n (up to 4096), ascending: the tensor-parallel degrees the heads allow.
std::vector<int> divisorsOf(int n);

} // namespace trellis::ui::plan_editor
