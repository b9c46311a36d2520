// The history a test writes to, on the engine the suite runs against: an SQLite file by default;
// with TRELLIS_TEST_HISTORY=postgresql (the ctest entries *_postgresql), a new database for each
// history on a private PostgreSQL server the suite starts in initTestCase and stops in
// cleanupTestCase (tests/support/postgres_cluster.sh: initdb into a temporary folder, as `nobody`
// under root). No test uses a server the machine already runs.
#pragma once

#include "launcher/history/history_engine.h"

#include <QAtomicInteger>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace trellis::test {

class HistoryEngines {
public:
    bool postgres() const { return qgetenv("TRELLIS_TEST_HISTORY") == "postgresql"; }
    launcher::HistoryEngine engine() const
    {
        return postgres() ? launcher::HistoryEngine::Postgres : launcher::HistoryEngine::Sqlite;
    }

    // Starts the server when the suite runs against PostgreSQL, with postgres_cluster.sh's
    // `options` (--tls); "" or why it could not.
    QString start(const QStringList &options = {})
    {
        if (!postgres())
            return {};
        m_dir = std::make_unique<QTemporaryDir>(QStringLiteral("/tmp/trellis-pg-test-XXXXXX"));
        QProcess up;
        up.start(QStringLiteral("bash"), QStringList{QStringLiteral(TRELLIS_SOURCE_DIR "/tests/support/postgres_cluster.sh"),
                                                     QStringLiteral("up"), m_dir->path()} + options);
        if (!up.waitForFinished(120000) || up.exitCode() != 0)
            return QStringLiteral("the PostgreSQL test server did not start: %1")
                .arg(QString::fromLocal8Bit(up.readAllStandardError() + up.readAllStandardOutput()));
        QFile url(m_dir->filePath(QStringLiteral("url")));
        if (!url.open(QIODevice::ReadOnly))
            return QStringLiteral("the PostgreSQL test server wrote no url");
        m_url = QString::fromUtf8(url.readAll()).trimmed();
        return {};
    }

    // Stops the server and starts it again (its databases kept): a server that went away and came back.
    bool down() const { return cluster(QStringLiteral("down")); }
    bool up() const { return cluster(QStringLiteral("start")); }

    void stop()
    {
        if (!m_dir)
            return;
        QProcess::execute(QStringLiteral("bash"), {QStringLiteral(TRELLIS_SOURCE_DIR "/tests/support/postgres_cluster.sh"),
                                                   QStringLiteral("down"), m_dir->path()});
        m_dir.reset();
    }

    // The server's folder (its socket, url and port files); empty for SQLite.
    QString serverDir() const { return m_dir ? m_dir->path() : QString(); }
    // The superuser's connection string to database `name` (the server's own "trellis" by default).
    QString urlOf(const QString &name = QStringLiteral("trellis")) const
    {
        QString u = m_url;
        return u.replace(QStringLiteral("@/trellis?"), QStringLiteral("@/%1?").arg(name));
    }

    // A new, empty history: `dir/name` for SQLite; a new database for PostgreSQL (its connection
    // string). "" when the database could not be made.
    QString fresh(const QTemporaryDir &dir, const QString &name)
    {
        if (!postgres())
            return dir.filePath(name);
        static QAtomicInteger<int> counter;
        const QString db = QStringLiteral("t%1").arg(counter.fetchAndAddRelaxed(1) + 1);
        return run(QStringLiteral("CREATE DATABASE %1").arg(db)).isEmpty() ? urlOf(db) : QString();
    }

    // Runs one statement as the superuser on the server's own database; "" or the error.
    QString run(const QString &sql) const
    {
        const QString name = QStringLiteral("trellis-test-admin");
        QString error;
        {
            QSqlDatabase admin = QSqlDatabase::contains(name) ? QSqlDatabase::database(name)
                                                                : QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
            launcher::ServerConnection c;
            launcher::parseServerConnection(m_url, &c);
            admin.setHostName(c.host);
            admin.setPort(c.port.toInt());
            admin.setDatabaseName(c.dbname);
            admin.setUserName(c.user);
            // Once more on a new connection when the server went away and came back since.
            for (int attempt = 0; attempt < 2; ++attempt) {
                if (attempt == 1)
                    admin.close();
                if (!admin.isOpen() && !admin.open())
                    return admin.lastError().text();
                QSqlQuery q(admin);
                error = q.exec(sql) ? QString() : q.lastError().text();
                if (error.isEmpty())
                    break;
            }
        }
        return error;
    }

private:
    bool cluster(const QString &command) const
    {
        return m_dir && QProcess::execute(QStringLiteral("bash"), {QStringLiteral(TRELLIS_SOURCE_DIR "/tests/support/postgres_cluster.sh"),
                                                                   command, m_dir->path()}) == 0;
    }
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_url;
};

} // namespace trellis::test
