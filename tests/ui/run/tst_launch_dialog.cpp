// The launch dialog: the preflight runs off the GUI thread and fills the table; a failing host keeps
// Launch disabled and names the host; picking this machine instead passes and enables Launch.
#include "backend/plan/plan_json.h"
#include "ui/run/launch_dialog.h"

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QTest>

using namespace trellis;

class TstLaunchDialog : public QObject {
    Q_OBJECT
private slots:
    void failingHostBlocksLaunchAndLocalPasses()
    {
        auto loaded = plan::loadPlanFile(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json");
        QVERIFY(loaded);
        plan::Plan p = loaded.value();
        p.launch.target = plan::LaunchTarget::Ssh;
        p.cluster.nodes = {{"127.0.0.1", 4, plan::DeviceKind::Cpu, {}, {}, 1, {}, {}}}; // nothing listens on port 1
        ui::LaunchDialog dialog(p, QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer"));
        dialog.show();
        auto *table = dialog.findChild<QTableWidget *>();
        QPushButton *launch = nullptr;
        for (auto *b : dialog.findChildren<QPushButton *>())
            if (b->text() == QLatin1String("Launch"))
                launch = b;
        QVERIFY(table && launch);
        QVERIFY(!launch->isEnabled()); // while the hosts are checked
        QTRY_VERIFY_WITH_TIMEOUT(table->rowCount() > 0, 30000);
        bool named = false;
        for (int r = 0; r < table->rowCount(); ++r)
            named |= table->item(r, 0)->text() == QLatin1String("127.0.0.1") && table->item(r, 2)->text() == QLatin1String("FAILED");
        QVERIFY(named);
        QVERIFY(!launch->isEnabled());

        auto *target = dialog.findChild<QComboBox *>();
        target->setCurrentIndex(target->findData(QStringLiteral("local")));
        QTRY_VERIFY_WITH_TIMEOUT(launch->isEnabled(), 30000);
        QCOMPARE(dialog.plan().launch.target, plan::LaunchTarget::Local);
    }
};

QTEST_MAIN(TstLaunchDialog)
#include "tst_launch_dialog.moc"
