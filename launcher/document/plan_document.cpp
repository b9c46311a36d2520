#include "launcher/document/plan_document.h"

#include "backend/plan/frameworks/framework_configs.h"
#include "backend/plan/plan_fields.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <QDir>
#include <QFileInfo>
#include <QUndoCommand>
#include <QUndoStack>

namespace trellis::launcher::document {

// One undo step: the plan before and after. `mergeKey` non-empty: consecutive steps with the same
// key (one field edited again and again) become one, and a step that ends where it began vanishes.
class PlanCommand : public QUndoCommand {
public:
    PlanCommand(PlanDocument *document, plan::Plan before, plan::Plan after, const QString &text, QString mergeKey)
        : QUndoCommand(text), m_document(document), m_before(std::move(before)), m_after(std::move(after)),
          m_mergeKey(std::move(mergeKey))
    {
    }
    void redo() override { m_document->apply(m_after); }
    void undo() override { m_document->apply(m_before); }
    int id() const override { return m_mergeKey.isEmpty() ? -1 : 1; }
    bool mergeWith(const QUndoCommand *other) override
    {
        const auto *next = static_cast<const PlanCommand *>(other);
        if (next->m_mergeKey != m_mergeKey)
            return false;
        m_after = next->m_after;
        setText(next->text());
        setObsolete(m_after == m_before);
        return true;
    }

private:
    PlanDocument *m_document;
    plan::Plan m_before, m_after;
    QString m_mergeKey;
};

namespace {
QString errorsOf(const plan::Diagnostics &errors)
{
    QStringList out;
    for (const auto &e : errors)
        out << QString::fromStdString(e.toString());
    return out.join(QLatin1Char('\n'));
}
} // namespace

PlanDocument::PlanDocument(QObject *parent) : QObject(parent), m_undo(new QUndoStack(this))
{
    m_diagnostics = plan::validatePlan(m_plan);
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) { emit modifiedChanged(!clean); });
}

PlanDocument::~PlanDocument()
{
    // The stack's commands point back here: drop them before the rest goes.
    m_undo->blockSignals(true);
    m_undo->clear();
}

QString PlanDocument::json() const { return QString::fromStdString(plan::planToJson(m_plan)); }

QString PlanDocument::displayName() const
{
    return m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
}

bool PlanDocument::isModified() const { return !m_undo->isClean(); }

bool PlanDocument::hasErrors() const { return plan::hasErrors(m_diagnostics); }

QString PlanDocument::field(const QString &path) const
{
    const auto value = plan::planField(m_plan, path.toStdString());
    return value ? QString::fromStdString(value.value()) : QString();
}

void PlanDocument::apply(const plan::Plan &plan)
{
    m_plan = plan;
    m_diagnostics = plan::validatePlan(m_plan);
    ++m_revision;
    emit changed();
}

void PlanDocument::push(const plan::Plan &next, const QString &action, const QString &mergeKey)
{
    if (next != m_plan)
        m_undo->push(new PlanCommand(this, m_plan, next, action, mergeKey));
}

QString PlanDocument::setField(const QString &path, const QString &value)
{
    const auto next = plan::withPlanField(m_plan, path.toStdString(), value.toStdString());
    if (!next)
        return errorsOf(next.errors());
    const QString shown = value.size() > 40 ? value.left(37) + QStringLiteral("…") : value;
    push(next.value(), tr("Set %1 to %2").arg(path, shown), path);
    return {};
}

QString PlanDocument::setFields(const QList<QPair<QString, QString>> &assignments, const QString &action)
{
    plan::Plan next = m_plan;
    for (const auto &[path, value] : assignments) {
        auto changed = plan::withPlanField(next, path.toStdString(), value.toStdString());
        if (!changed)
            return errorsOf(changed.errors());
        next = std::move(changed).value();
    }
    push(next, action, {});
    return {};
}

void PlanDocument::replacePlan(const plan::Plan &plan, const QString &action) { push(plan, action, {}); }

bool PlanDocument::removeNode(int index)
{
    if (index < 0 || index >= static_cast<int>(m_plan.cluster.nodes.size()) || m_plan.cluster.nodes.size() < 2)
        return false;
    plan::Plan next = m_plan;
    const std::string host = next.cluster.nodes[static_cast<std::size_t>(index)].host;
    next.cluster.nodes.erase(next.cluster.nodes.begin() + index);
    push(next, tr("Remove node %1").arg(QString::fromStdString(host)), {});
    return true;
}

namespace {
void collect(const plan::Diagnostics &from, QStringList *to)
{
    if (to)
        for (const auto &d : from)
            to->append(QString::fromStdString(d.toString()));
}
} // namespace

QString PlanDocument::importDeepSpeed(const QByteArray &configJson, QStringList *warnings)
{
    const nlohmann::json config = nlohmann::json::parse(configJson.constData(), configJson.constData() + configJson.size(), nullptr, false);
    if (config.is_discarded() || !config.is_object())
        return tr("deepspeed: not a JSON object (a DeepSpeed config is one)");
    plan::Diagnostics found;
    auto imported = plan::fromDeepSpeedConfig(config, m_plan, &found);
    collect(found, warnings);
    if (!imported)
        return errorsOf(imported.errors());
    push(imported.value(), tr("Import DeepSpeed config"), {});
    return {};
}

QString PlanDocument::importMegatron(const QString &argumentLine, QStringList *warnings)
{
    plan::Diagnostics found;
    auto imported = plan::fromMegatronArgs(argumentLine.toStdString(), m_plan, &found);
    collect(found, warnings);
    if (!imported)
        return errorsOf(imported.errors());
    push(imported.value(), tr("Import Megatron-LM arguments"), {});
    return {};
}

QString PlanDocument::exportDeepSpeed() const { return QString::fromStdString(plan::toDeepSpeedConfig(m_plan).dump(2)); }

QString PlanDocument::exportMegatron() const { return QString::fromStdString(plan::toMegatronArgs(m_plan)); }

void PlanDocument::newDocument(const plan::Plan &plan)
{
    m_undo->clear();
    const bool hadPath = !m_filePath.isEmpty();
    m_filePath.clear();
    apply(plan);
    m_undo->setClean();
    if (hadPath)
        emit filePathChanged(m_filePath);
}

QString PlanDocument::open(const QString &path)
{
    auto loaded = plan::loadPlanFile(path.toStdString());
    if (!loaded)
        return errorsOf(loaded.errors());
    m_undo->clear();
    m_filePath = QFileInfo(path).absoluteFilePath();
    apply(loaded.value());
    m_undo->setClean();
    emit filePathChanged(m_filePath);
    return {};
}

QString PlanDocument::save()
{
    if (m_filePath.isEmpty())
        return tr("the plan has no file yet: use Save As");
    if (auto saved = plan::savePlanFile(m_plan, m_filePath.toStdString()); !saved)
        return errorsOf(saved.errors());
    m_undo->setClean();
    return {};
}

QString PlanDocument::saveAs(const QString &path)
{
    const QString target = QFileInfo(path).absoluteFilePath();
    const QString oldDir = m_filePath.isEmpty() ? QDir::currentPath() : QFileInfo(m_filePath).absolutePath();
    const QString newDir = QFileInfo(target).absolutePath();
    plan::Plan rebased = m_plan;
    if (QDir(oldDir) != QDir(newDir))
        for (std::string *p : {&rebased.training.data.path, &rebased.training.checkpoint.dir, &rebased.training.init.from})
            if (!p->empty() && QFileInfo(QString::fromStdString(*p)).isRelative())
                *p = QDir(newDir).relativeFilePath(QDir::cleanPath(oldDir + QLatin1Char('/') + QString::fromStdString(*p))).toStdString();
    if (auto saved = plan::savePlanFile(rebased, target.toStdString()); !saved)
        return errorsOf(saved.errors());
    push(rebased, tr("Rebase relative paths"), {});
    m_filePath = target;
    m_undo->setClean();
    emit filePathChanged(m_filePath);
    return {};
}

} // namespace trellis::launcher::document
