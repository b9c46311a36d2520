// Packed step reports; see step_blocks.h.
#include "launcher/history/step_blocks.h"

#include <functional>

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <QtEndian>

#include <algorithm>
#include <bit>
#include <cstring>

namespace trellis::launcher {
namespace {

void putInt(char *&at, qint64 v)
{
    qToLittleEndian(v, at);
    at += 8;
}
qint64 getInt(const char *&at)
{
    const qint64 v = qFromLittleEndian<qint64>(at);
    at += 8;
    return v;
}

// StepRow's fields in the record's order, as 64-bit patterns; which of them are integers.
std::array<quint64, kStepRecordFields> fieldsOf(const StepRow &s)
{
    auto d = [](double v) { return std::bit_cast<quint64>(v); };
    auto i = [](qint64 v) { return static_cast<quint64>(v); };
    return {i(s.step),          d(s.stepMs),          d(s.computeMs),    d(s.commMs),         d(s.commExposedMs),
            d(s.bubbleMs),      d(s.idleMs),          i(s.tokens),       d(s.tokensPerS),     d(s.loss),
            d(s.gradNorm),      d(s.lr),              i(s.memParameters), i(s.memGradients), i(s.memOptimizer),
            i(s.memActivations), i(s.memComm),        i(s.peakRss),      i(s.memMaster),      d(s.lossScale),
            i(s.skippedSteps),  i(s.updateSkipped ? 1 : 0), i(s.outerSteps),   i(s.dpBytes),      i(s.dpDenseBytes),
            d(s.checkpointMs),  i(s.checkpointBehind ? 1 : 0), d(s.checkpointWriteMs)};
}
constexpr bool kIntegerField[kStepRecordFields] = {true,  false, false, false, false, false, false, true,
                                                   false, false, false, false, true,  true,  true,  true,
                                                   true,  true,  true,  false, true,  true,  true,  true,
                                                   true,  false, true,  false};

StepRow rowOf(int rank, const std::array<quint64, kStepRecordFields> &f)
{
    auto d = [&](int k) { return std::bit_cast<double>(f[k]); };
    auto i = [&](int k) { return static_cast<qint64>(f[k]); };
    StepRow s;
    s.rank = rank;
    s.step = i(0);
    s.stepMs = d(1);
    s.computeMs = d(2);
    s.commMs = d(3);
    s.commExposedMs = d(4);
    s.bubbleMs = d(5);
    s.idleMs = d(6);
    s.tokens = i(7);
    s.tokensPerS = d(8);
    s.loss = d(9);
    s.gradNorm = d(10);
    s.lr = d(11);
    s.memParameters = i(12);
    s.memGradients = i(13);
    s.memOptimizer = i(14);
    s.memActivations = i(15);
    s.memComm = i(16);
    s.peakRss = i(17);
    s.memMaster = i(18);
    s.lossScale = d(19);
    s.skippedSteps = i(20);
    s.updateSkipped = i(21) != 0;
    s.outerSteps = i(22);
    s.dpBytes = i(23);
    s.dpDenseBytes = i(24);
    s.checkpointMs = d(25);
    s.checkpointBehind = i(26) != 0;
    s.checkpointWriteMs = d(27);
    return s;
}

const char *const kLegacySelect =
    "SELECT rank, step, step_ms, compute_ms, comm_ms, comm_exposed_ms, bubble_ms, idle_ms, tokens, tokens_per_s, loss,"
    " grad_norm, lr, mem_parameters, mem_gradients, mem_optimizer, mem_activations, mem_comm, peak_rss FROM step_metrics";

} // namespace

void packStepRecord(const StepRow &s, QByteArray &blob)
{
    const qsizetype at = blob.size();
    blob.resize(at + kStepRecordBytes);
    char *p = blob.data() + at;
    const auto f = fieldsOf(s);
    for (int k = 0; k < kStepRecordFields7; ++k)
        putInt(p, static_cast<qint64>(f[static_cast<std::size_t>(k)]));
}

void StepBlockEncoder::clear()
{
    m_previous.fill(0);
    m_rank = 0;
    m_bytes.resize(0);
    m_count = 0;
}

void StepBlockEncoder::add(const StepRow &row)
{
    const std::array<quint64, kStepRecordFields> f = fieldsOf(row);
    if (m_ranked) {
        const auto d = static_cast<qint64>(static_cast<quint64>(row.rank) - static_cast<quint64>(m_rank));
        quint64 z = (static_cast<quint64>(d) << 1) ^ static_cast<quint64>(d >> 63);
        while (z >= 0x80) {
            m_bytes.append(static_cast<char>(z | 0x80));
            z >>= 7;
        }
        m_bytes.append(static_cast<char>(z));
        m_rank = row.rank;
    }
    unsigned char out[4 + kStepRecordFields * 10];
    unsigned char *p = out + m_maskBytes;
    quint32 mask = 0;
    for (int k = 0; k < kStepRecordFields; ++k) {
        if (f[k] == m_previous[k])
            continue;
        mask |= 1u << k;
        if (kIntegerField[k]) {
            const auto d = static_cast<qint64>(f[k] - m_previous[k]);
            quint64 z = (static_cast<quint64>(d) << 1) ^ static_cast<quint64>(d >> 63);
            while (z >= 0x80) {
                *p++ = static_cast<unsigned char>(z | 0x80);
                z >>= 7;
            }
            *p++ = static_cast<unsigned char>(z);
        } else {
            const quint64 x = f[k] ^ m_previous[k];
            const int lead = std::countl_zero(x) / 8, trail = std::countr_zero(x) / 8;
            *p++ = static_cast<unsigned char>(lead << 4 | trail);
            for (int b = trail; b < 8 - lead; ++b)
                *p++ = static_cast<unsigned char>(x >> (8 * b));
        }
    }
    out[0] = static_cast<unsigned char>(mask);
    out[1] = static_cast<unsigned char>(mask >> 8);
    out[2] = static_cast<unsigned char>(mask >> 16);
    if (m_maskBytes == 4)
        out[3] = static_cast<unsigned char>(mask >> 24);
    m_bytes.append(reinterpret_cast<const char *>(out), p - out);
    m_previous = f;
    ++m_count;
}

namespace {

// A zigzag LEB128 number from [p, end): false when cut short or longer than 64 bits.
bool readZigzag(const unsigned char *&p, const unsigned char *end, qint64 &value)
{
    quint64 z = 0;
    for (int shift = 0;; shift += 7) {
        if (p == end || shift > 63)
            return false;
        const unsigned char b = *p++;
        z |= static_cast<quint64>(b & 0x7F) << shift;
        if (!(b & 0x80))
            break;
    }
    value = static_cast<qint64>((z >> 1) ^ (~(z & 1) + 1));
    return true;
}

bool unpackFixed(int rank, const QByteArray &blob, qint64 count, QList<StepRow> &out, const std::function<bool(const QString &)> &corrupt)
{
    if (blob.size() % kStepRecordBytes != 0 || blob.size() / kStepRecordBytes != count)
        return corrupt(QStringLiteral("%1 bytes for %2 records of %3 bytes").arg(blob.size()).arg(count).arg(kStepRecordBytes));
    const char *p = blob.constData();
    for (qint64 i = 0; i < count; ++i) {
        std::array<quint64, kStepRecordFields> f{};
        for (int k = 0; k < kStepRecordFields7; ++k)
            f[static_cast<std::size_t>(k)] = static_cast<quint64>(getInt(p));
        out.append(rowOf(rank, f));
    }
    return true;
}

// One record's changed fields (after its mask) applied to f: empty, or what is wrong at which byte.
QString applyRecordFields(const unsigned char *&p, const unsigned char *begin, const unsigned char *end, quint32 mask,
                          int fields, std::array<quint64, kStepRecordFields> &f)
{
    auto at = [&] { return static_cast<qint64>(p - begin); };
    for (int k = 0; k < fields; ++k) {
        if (!(mask & (1u << k)))
            continue;
        if (kIntegerField[k]) {
            qint64 d = 0;
            if (!readZigzag(p, end, d))
                return QStringLiteral("has a cut or overlong number at byte %1").arg(at());
            f[k] += static_cast<quint64>(d);
            continue;
        }
        if (p == end)
            return QStringLiteral("cut short at byte %1").arg(at());
        const int lead = *p >> 4, trail = *p & 0x0F;
        ++p;
        if (lead + trail > 7)
            return QStringLiteral("has a bad field header at byte %1").arg(at() - 1);
        if (end - p < 8 - lead - trail)
            return QStringLiteral("cut short at byte %1").arg(at());
        quint64 x = 0;
        for (int b = trail; b < 8 - lead; ++b)
            x |= static_cast<quint64>(*p++) << (8 * b);
        f[k] ^= x;
    }
    return {};
}

} // namespace

bool unpackStepBlock(int rank, const QByteArray &blob, qint64 count, StepEncoding encoding, QList<StepRow> &out,
                     QString *error, std::optional<int> only)
{
    const std::function<bool(const QString &)> corrupt = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("a step block of rank %1 is corrupt (%2)").arg(rank).arg(why);
        return false;
    };
    if (count < 0)
        return corrupt(QStringLiteral("%1 records").arg(count));
    if (encoding == StepEncoding::Fixed)
        return unpackFixed(rank, blob, count, out, corrupt);
    if (encoding != StepEncoding::Delta && encoding != StepEncoding::Delta22 && encoding != StepEncoding::Delta25 &&
        encoding != StepEncoding::Ranked25 && encoding != StepEncoding::Ranked28)
        return corrupt(QStringLiteral("unknown encoding %1").arg(static_cast<int>(encoding)));
    const int fields = encoding == StepEncoding::Delta     ? kStepRecordFields7
                       : encoding == StepEncoding::Delta22  ? kStepRecordFields22
                       : encoding == StepEncoding::Ranked28 ? kStepRecordFields
                                                            : kStepRecordFields25;
    const int maskBytes = encoding >= StepEncoding::Delta25 ? 4 : 3;
    const bool ranked = encoding >= StepEncoding::Ranked25;
    qint64 recordRank = ranked ? 0 : rank;
    const auto *p = reinterpret_cast<const unsigned char *>(blob.constData());
    const auto *const begin = p, *const end = p + blob.size();
    auto at = [&] { return static_cast<qint64>(p - begin); };
    std::array<quint64, kStepRecordFields> f{};
    for (qint64 i = 0; i < count; ++i) {
        if (ranked) {
            qint64 d = 0;
            if (!readZigzag(p, end, d))
                return corrupt(QStringLiteral("record %1 of %2 has a cut or overlong rank at byte %3").arg(i + 1).arg(count).arg(at()));
            recordRank = static_cast<qint64>(static_cast<quint64>(recordRank) + static_cast<quint64>(d));
            if (recordRank < 0 || recordRank > std::numeric_limits<int>::max())
                return corrupt(QStringLiteral("record %1 names rank %2").arg(i + 1).arg(recordRank));
        }
        if (end - p < maskBytes)
            return corrupt(QStringLiteral("record %1 of %2 cut short at byte %3").arg(i + 1).arg(count).arg(at()));
        const quint32 mask = p[0] | quint32(p[1]) << 8 | quint32(p[2]) << 16 | (maskBytes == 4 ? quint32(p[3]) << 24 : 0);
        p += maskBytes;
        if (mask >> fields)
            return corrupt(QStringLiteral("record %1 names fields that do not exist").arg(i + 1));
        if (const QString wrong = applyRecordFields(p, begin, end, mask, fields, f); !wrong.isEmpty())
            return corrupt(QStringLiteral("record %1 %2").arg(i + 1).arg(wrong));
        if (!only || *only == recordRank)
            out.append(rowOf(static_cast<int>(recordRank), f));
    }
    if (p != end)
        return corrupt(QStringLiteral("%1 bytes after its %2 records").arg(end - p).arg(count));
    return true;
}

namespace {

// The rows of schema versions before step blocks (step_metrics), for one rank and a step window.
bool readLegacyRows(QSqlDatabase &db, qint64 run, QList<StepRow> &rows, QString &error, std::optional<int> rank, bool window,
                    qint64 fromStep, qint64 toStep)
{
    QSqlQuery q(db);
    q.setForwardOnly(true);
    q.prepare(QString::fromLatin1(kLegacySelect) + QStringLiteral(" WHERE run = ?") +
              (rank ? QStringLiteral(" AND rank = ?") : QString()) + (rank || window ? QStringLiteral(" AND step BETWEEN ? AND ?") : QString()));
    q.addBindValue(run);
    if (rank)
        q.addBindValue(*rank);
    if (rank || window) {
        q.addBindValue(fromStep);
        q.addBindValue(toStep);
    }
    if (!q.exec()) {
        error = q.lastError().text();
        return false;
    }
    while (q.next()) {
        StepRow s;
        s.rank = q.value(0).toInt();
        s.step = q.value(1).toLongLong();
        double *doubles[] = {&s.stepMs, &s.computeMs, &s.commMs, &s.commExposedMs, &s.bubbleMs, &s.idleMs};
        for (int i = 0; i < 6; ++i)
            *doubles[i] = q.value(2 + i).toDouble();
        s.tokens = q.value(8).toLongLong();
        double *more[] = {&s.tokensPerS, &s.loss, &s.gradNorm, &s.lr};
        for (int i = 0; i < 4; ++i)
            *more[i] = q.value(9 + i).toDouble();
        qint64 *memory[] = {&s.memParameters, &s.memGradients, &s.memOptimizer, &s.memActivations, &s.memComm, &s.peakRss};
        for (int i = 0; i < 6; ++i)
            *memory[i] = q.value(13 + i).toLongLong();
        rows.append(s);
    }
    return true;
}

// The step blocks that may hold the rank and window, in rowid (age) order, unpacked; a block's
// rows outside the window are not kept. A corrupt block is reported and the others still read.
bool readBlockRows(QSqlDatabase &db, qint64 run, QList<StepRow> &rows, QString &error, std::optional<int> rank, bool window,
                   qint64 fromStep, qint64 toStep)
{
    QSqlQuery b(db);
    b.setForwardOnly(true);
    // A block holds the ranks [rank, last_rank] (one before schema 11), never more than
    // kRanksPerBlock: the index on (run, rank, last_step) finds those that may hold `rank`.
    b.prepare(QStringLiteral("SELECT rank, n, rows, encoding FROM step_blocks WHERE run = ?") +
              (rank ? QStringLiteral(" AND rank <= ? AND rank > ? AND coalesce(last_rank, rank) >= ?") : QString()) +
              (rank || window ? QStringLiteral(" AND last_step >= ? AND first_step <= ?") : QString()) +
              QStringLiteral(" ORDER BY rowid"));
    b.addBindValue(run);
    if (rank) {
        b.addBindValue(*rank);
        b.addBindValue(*rank - kRanksPerBlock);
        b.addBindValue(*rank);
    }
    if (rank || window) {
        b.addBindValue(fromStep);
        b.addBindValue(toStep);
    }
    if (!b.exec()) {
        error = b.lastError().text();
        return false;
    }
    bool ok = true;
    while (b.next()) {
        QString why;
        const qsizetype before = rows.size();
        if (!unpackStepBlock(b.value(0).toInt(), b.value(2).toByteArray(), b.value(1).toLongLong(),
                             static_cast<StepEncoding>(b.value(3).toInt()), rows, &why, rank) && ok) {
            error = why;
            ok = false;
        }
        if (window) // a block's other steps are not kept
            rows.erase(std::remove_if(rows.begin() + before, rows.end(),
                                      [&](const StepRow &s) { return s.step < fromStep || s.step > toStep; }),
                       rows.end());
    }
    return ok;
}

// The newest copy of each (step, rank), in (step, rank) order: a stable sort keeps age order among
// equals; the last is taken, compacted in place (a second copy of every row would double what a
// long run's read holds).
void keepNewestCopies(QList<StepRow> &rows)
{
    std::stable_sort(rows.begin(), rows.end(),
                     [](const StepRow &x, const StepRow &y) { return x.step != y.step ? x.step < y.step : x.rank < y.rank; });
    qsizetype kept = 0;
    for (qsizetype i = 0; i < rows.size(); ++i)
        if (i + 1 == rows.size() || rows[i + 1].step != rows[i].step || rows[i + 1].rank != rows[i].rank)
            rows[kept++] = rows[i];
    rows.resize(kept);
}

} // namespace

bool readStepRows(QSqlDatabase &db, qint64 run, QList<StepRow> &out, QString *error, std::optional<int> rank,
                  qint64 fromStep, qint64 toStep)
{
    const bool window = fromStep > 0 || toStep < std::numeric_limits<qint64>::max();
    // Read order is age order: legacy rows, then blocks by rowid; a later copy of a (rank, step)
    // replaces an earlier one.
    QList<StepRow> rows;
    QString legacyError, blockError;
    const bool legacyOk = readLegacyRows(db, run, rows, legacyError, rank, window, fromStep, toStep);
    const bool blocksOk = readBlockRows(db, run, rows, blockError, rank, window, fromStep, toStep);
    if (error && (!legacyOk || !blocksOk))
        *error = !legacyOk ? legacyError : blockError;
    if (rank)
        rows.removeIf([&](const StepRow &s) { return s.rank != *rank; });
    keepNewestCopies(rows);
    if (out.isEmpty())
        out = std::move(rows);
    else
        out.append(rows);
    return legacyOk && blocksOk;
}

bool forEachStepChunk(QSqlDatabase &db, qint64 run, qint64 fromStep, qint64 rowsPerChunk,
                      const std::function<void(const QList<StepRow> &)> &consume, QString *error)
{
    // The run's last step (from the blocks' columns and the legacy rows) and its world size.
    qint64 lastStep = -1, ranks = 1;
    const char *const facts[] = {"SELECT max(last_step) FROM step_blocks WHERE run = ?", "SELECT max(step) FROM step_metrics WHERE run = ?",
                                 "SELECT world_size FROM runs WHERE id = ?"};
    for (int i = 0; i < 3; ++i) {
        QSqlQuery q(db);
        q.prepare(QString::fromLatin1(facts[i]));
        q.addBindValue(run);
        if (!q.exec()) {
            if (error)
                *error = q.lastError().text();
            return false;
        }
        if (!q.next() || q.value(0).isNull())
            continue;
        if (i < 2)
            lastStep = std::max(lastStep, q.value(0).toLongLong());
        else
            ranks = std::max<qint64>(1, q.value(0).toLongLong());
    }
    // Windows of steps holding about rowsPerChunk rows when every rank reports every step.
    const qint64 width = std::max<qint64>(1, rowsPerChunk / ranks);
    bool ok = true;
    for (qint64 from = std::max<qint64>(0, fromStep); from <= lastStep; from += width) {
        QList<StepRow> rows;
        QString why;
        if (!readStepRows(db, run, rows, &why, {}, from, std::min(lastStep, from + width - 1))) {
            if (error && ok)
                *error = why;
            ok = false;
        }
        if (!rows.isEmpty())
            consume(rows);
    }
    return ok;
}

} // namespace trellis::launcher
