// Packed collective reports; see collective_blocks.h.
#include "launcher/history/collective_blocks.h"

#include <QtEndian>

#include <bit>
#include <limits>

namespace trellis::launcher {
namespace {

constexpr int kMaxNames = 254;
constexpr unsigned char kNewName = 255;

void putVarint(QByteArray &out, quint64 z)
{
    while (z >= 0x80) {
        out.append(static_cast<char>(z | 0x80));
        z >>= 7;
    }
    out.append(static_cast<char>(z));
}

void putDifference(QByteArray &out, qint64 now, qint64 before)
{
    const auto d = static_cast<qint64>(static_cast<quint64>(now) - static_cast<quint64>(before)); // wraps
    putVarint(out, (static_cast<quint64>(d) << 1) ^ static_cast<quint64>(d >> 63));
}

void putDouble(QByteArray &out, double v)
{
    char bytes[8];
    qToLittleEndian(std::bit_cast<quint64>(v), bytes);
    out.append(bytes, 8);
}

// Reads a blob front to back; every read says whether the bytes were there.
class Reader {
public:
    explicit Reader(const QByteArray &blob)
        : m_p(reinterpret_cast<const unsigned char *>(blob.constData())), m_begin(m_p), m_end(m_p + blob.size())
    {
    }
    qint64 at() const { return m_p - m_begin; }
    bool done() const { return m_p == m_end; }
    bool varint(quint64 &z)
    {
        z = 0;
        for (int shift = 0;; shift += 7) {
            if (m_p == m_end || shift > 63)
                return false;
            const unsigned char b = *m_p++;
            z |= static_cast<quint64>(b & 0x7F) << shift;
            if (!(b & 0x80))
                return true;
        }
    }
    bool difference(qint64 &value)
    {
        quint64 z = 0;
        if (!varint(z))
            return false;
        const auto d = static_cast<qint64>((z >> 1) ^ (~(z & 1) + 1));
        value = static_cast<qint64>(static_cast<quint64>(value) + static_cast<quint64>(d));
        return true;
    }
    bool byte(unsigned char &b)
    {
        if (m_p == m_end)
            return false;
        b = *m_p++;
        return true;
    }
    bool text(QString &out, quint64 length)
    {
        if (length > static_cast<quint64>(m_end - m_p))
            return false;
        out = QString::fromUtf8(reinterpret_cast<const char *>(m_p), static_cast<qsizetype>(length));
        m_p += length;
        return true;
    }
    bool real(double &v)
    {
        if (m_end - m_p < 8)
            return false;
        v = std::bit_cast<double>(qFromLittleEndian<quint64>(m_p));
        m_p += 8;
        return true;
    }

private:
    const unsigned char *m_p, *m_begin, *m_end;
};

// A group or operation name: the block's k-th, or a new one written out. "" or what is wrong.
QString readName(Reader &r, QStringList &names, QString &name)
{
    unsigned char k = 0;
    if (!r.byte(k))
        return QStringLiteral("cut short at byte %1").arg(r.at());
    if (k != kNewName) {
        if (k >= names.size())
            return QStringLiteral("names a group or operation it never wrote (%1 of %2) at byte %3").arg(k).arg(names.size()).arg(r.at() - 1);
        name = names[k];
        return {};
    }
    quint64 length = 0;
    if (!r.varint(length) || !r.text(name, length))
        return QStringLiteral("has a cut name at byte %1").arg(r.at());
    if (names.size() < kMaxNames)
        names.append(name);
    return {};
}

} // namespace

void CollectiveBlockEncoder::clear()
{
    m_bytes.resize(0);
    m_names.clear();
    m_count = m_rank = m_step = m_size = m_calls = 0;
}

void CollectiveBlockEncoder::putName(const QString &name)
{
    const qsizetype k = m_names.indexOf(name);
    if (k >= 0) {
        m_bytes.append(static_cast<char>(k));
        return;
    }
    const QByteArray utf8 = name.toUtf8();
    m_bytes.append(static_cast<char>(kNewName));
    putVarint(m_bytes, static_cast<quint64>(utf8.size()));
    m_bytes.append(utf8);
    if (m_names.size() < kMaxNames)
        m_names.append(name);
}

void CollectiveBlockEncoder::add(const CollectiveRow &row)
{
    putDifference(m_bytes, row.rank, m_rank);
    putDifference(m_bytes, row.step, m_step);
    putName(row.group);
    putName(row.op);
    putDifference(m_bytes, row.bytes, m_size);
    putDifference(m_bytes, row.count, m_calls);
    putDouble(m_bytes, row.ms);
    putDouble(m_bytes, row.busGBps);
    m_rank = row.rank;
    m_step = row.step;
    m_size = row.bytes;
    m_calls = row.count;
    ++m_count;
}

bool unpackCollectiveBlock(int rank, const QByteArray &blob, qint64 count, QList<CollectiveRow> &out, QString *error)
{
    auto corrupt = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("a collective block of rank %1 is corrupt (%2)").arg(rank).arg(why);
        return false;
    };
    if (count < 0)
        return corrupt(QStringLiteral("%1 records").arg(count));
    Reader r(blob);
    QStringList names;
    qint64 recordRank = 0, step = 0, size = 0, calls = 0;
    for (qint64 i = 0; i < count; ++i) {
        CollectiveRow c;
        if (!r.difference(recordRank) || !r.difference(step))
            return corrupt(QStringLiteral("record %1 of %2 cut short at byte %3").arg(i + 1).arg(count).arg(r.at()));
        if (recordRank < 0 || recordRank > std::numeric_limits<int>::max())
            return corrupt(QStringLiteral("record %1 names rank %2").arg(i + 1).arg(recordRank));
        c.rank = static_cast<int>(recordRank);
        if (const QString why = readName(r, names, c.group); !why.isEmpty())
            return corrupt(QStringLiteral("record %1 %2").arg(i + 1).arg(why));
        if (const QString why = readName(r, names, c.op); !why.isEmpty())
            return corrupt(QStringLiteral("record %1 %2").arg(i + 1).arg(why));
        if (!r.difference(size) || !r.difference(calls) || !r.real(c.ms) || !r.real(c.busGBps))
            return corrupt(QStringLiteral("record %1 of %2 cut short at byte %3").arg(i + 1).arg(count).arg(r.at()));
        c.step = step;
        c.bytes = size;
        c.count = static_cast<int>(calls);
        out.append(c);
    }
    if (!r.done())
        return corrupt(QStringLiteral("%1 bytes after its %2 records").arg(blob.size() - r.at()).arg(count));
    return true;
}

} // namespace trellis::launcher
