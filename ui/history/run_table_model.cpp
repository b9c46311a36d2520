// See run_table_model.h.
#include "ui/history/run_table_model.h"
#include "ui/widgets/run_words.h"

#include <QColor>
#include <QLocale>

#include <limits>

namespace trellis::ui {
namespace {

QString durationText(qint64 ms)
{
    if (ms < 0)
        return {};
    const qint64 s = ms / 1000;
    if (s >= 3600)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    if (s >= 60)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60);
    return QStringLiteral("%1 s").arg(ms / 1000.0, 0, 'f', 1);
}

// Unknown figures sort after every known one in a column's first sort (initialOrder: tokens/s
// and MFU highest first, loss lowest first), before them when it is reversed.
constexpr double kUnknown = -std::numeric_limits<double>::infinity();

} // namespace

bool RunTableModel::shownByDefault(Column column)
{
    switch (column) {
    case Plan:
    case Target:
    case Note:
    case Command:
    case Kind:
        return false;
    default:
        return true;
    }
}

RunTableModel::RunTableModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunTableModel::setRuns(const QList<launcher::RunSummary> &runs)
{
    beginResetModel();
    m_runs = runs;
    m_rowOf.clear();
    m_rowOf.reserve(m_runs.size());
    for (int i = 0; i < m_runs.size(); ++i)
        m_rowOf.insert(m_runs[i].id, i);
    endResetModel();
}

void RunTableModel::updateRun(const launcher::RunSummary &run)
{
    const auto it = m_rowOf.constFind(run.id);
    if (it == m_rowOf.constEnd())
        return;
    m_runs[*it] = run;
    emit dataChanged(index(*it, 0), index(*it, ColumnCount - 1));
}

const launcher::RunSummary *RunTableModel::run(qint64 id) const
{
    const auto it = m_rowOf.constFind(id);
    return it == m_rowOf.constEnd() ? nullptr : &m_runs[*it];
}

int RunTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : static_cast<int>(m_runs.size()); }

int RunTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

// A column's first click sorts the way it is read: the newest, largest, fastest first, the lowest
// loss first, words from A.
int RunTableModel::initialOrder(int section)
{
    switch (section) {
    case RunId:
    case Started:
    case Duration:
    case Ranks:
    case Steps:
    case TokensPerS:
    case Mfu: return Qt::DescendingOrder;
    default: return Qt::AscendingOrder;
    }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::InitialSortOrderRole)
        return initialOrder(section);
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case RunId: return tr("Run");
    case Name: return tr("Name");
    case Status: return tr("Status");
    case Started: return tr("Started");
    case Duration: return tr("Duration");
    case Plan: return tr("Plan");
    case Ranks: return tr("Ranks");
    case Layout: return tr("Layout");
    case Precision: return tr("Precision");
    case Steps: return tr("Steps");
    case Loss: return tr("Final loss");
    case TokensPerS: return tr("Tokens/s");
    case Mfu: return tr("MFU");
    case Target: return tr("Host or target");
    case Tags: return tr("Tags");
    case Note: return tr("Note");
    case Command: return tr("Command");
    case Kind: return tr("Kind");
    }
    return {};
}

QVariant RunTableModel::display(const launcher::RunSummary &r, int column) const
{
    switch (column) {
    case RunId: return r.runId;
    case Name: return r.name;
    case Status: return r.archived ? tr("%1 (archived)").arg(statusText(r.status)) : statusText(r.status);
    case Started: return r.startedAt.isValid() ? QLocale().toString(r.startedAt.toLocalTime(), QLocale::ShortFormat) : QString();
    case Duration: return durationText(r.durationMs());
    case Plan: return r.planName;
    case Ranks: return r.worldSize;
    case Layout: return r.layout;
    case Precision: return r.precision;
    case Steps: return QStringLiteral("%1/%2").arg(r.stepsDone).arg(r.totalSteps);
    case Loss: return r.stepsDone ? QString::number(r.lastLoss, 'f', 4) : QString();
    case TokensPerS: return r.tokensPerS > 0 ? QLocale().toString(r.tokensPerS, 'f', 0) : QString();
    case Mfu: return r.mfu >= 0 ? QStringLiteral("%1%").arg(r.mfu * 100, 0, 'f', 1) : QString();
    case Target: return r.launcherHost.isEmpty() ? r.target : QStringLiteral("%1 · %2").arg(r.target, r.launcherHost);
    case Tags: return r.tags.join(QStringLiteral(", "));
    case Note: return r.note.section(QLatin1Char('\n'), 0, 0);
    case Command: return r.launchCommands.isEmpty() ? QString() : r.launchCommands.last();
    case Kind: return kindText(r.kind);
    }
    return {};
}

QVariant RunTableModel::sortKey(const launcher::RunSummary &r, int column) const
{
    switch (column) {
    case RunId: return r.id; // the order runs were recorded in
    case Started: return r.startedAt.isValid() ? r.startedAt.toMSecsSinceEpoch() : std::numeric_limits<qint64>::min();
    case Duration: return r.durationMs();
    case Ranks: return r.worldSize;
    case Steps: return r.stepsDone;
    case Loss: return r.stepsDone ? r.lastLoss : -kUnknown; // sorted lowest first
    case TokensPerS: return r.tokensPerS > 0 ? r.tokensPerS : kUnknown;
    case Mfu: return r.mfu >= 0 ? r.mfu : kUnknown;
    default: return display(r, column).toString().toLower();
    }
}

QVariant RunTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_runs.size())
        return {};
    const launcher::RunSummary &r = m_runs[index.row()];
    switch (role) {
    case Qt::DisplayRole: return display(r, index.column());
    case Qt::UserRole: return sortKey(r, index.column());
    case kIdRole: return r.id;
    case Qt::ToolTipRole:
        if (index.column() == Status && !r.error.isEmpty())
            return r.error;
        if (index.column() == Note || index.column() == Command)
            return index.column() == Note ? r.note : r.launchCommands.join(QLatin1Char('\n'));
        return {};
    case Qt::ForegroundRole:
        if (index.column() != Status || !statusColour(r.status).isValid())
            return {};
        return statusColour(r.status);
    case Qt::TextAlignmentRole:
        switch (index.column()) {
        case Ranks: case Steps: case Loss: case TokensPerS: case Mfu: case Duration:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default: return {};
        }
    default: return {};
    }
}

} // namespace trellis::ui
