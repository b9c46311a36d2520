// See start_page.h.
#include "ui/workspace/start_page.h"
#include "ui/widgets/run_words.h"

#include "backend/plan/plan_json.h"

#include <QDirIterator>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace trellis::ui::workspace {

namespace {

QListWidget *makeList(QWidget *parent, const QString &name)
{
    auto *list = new QListWidget(parent);
    list->setObjectName(name);
    list->setWordWrap(true);
    list->setUniformItemSizes(false);
    list->setSpacing(2);
    list->setTextElideMode(Qt::ElideMiddle);
    return list;
}

QLabel *heading(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.15);
    label->setFont(font);
    return label;
}

} // namespace

StartPage::StartPage(QWidget *parent)
    : QWidget(parent), m_examples(makeList(this, QStringLiteral("examples"))),
      m_recentPlans(makeList(this, QStringLiteral("recentPlans"))), m_recentRuns(makeList(this, QStringLiteral("recentRuns")))
{
    auto *layout = new QGridLayout(this);
    layout->setContentsMargins(32, 24, 32, 24);
    layout->setHorizontalSpacing(32);
    auto *title = new QLabel(tr("<h1>Trellis</h1><p>Plan a parallel training run, launch it, watch every rank.</p>"), this);
    title->setTextFormat(Qt::RichText);
    layout->addWidget(title, 0, 0, 1, 2);

    auto *start = new QVBoxLayout;
    start->addWidget(heading(tr("Start"), this));
    auto *fresh = new QPushButton(tr("New plan for this machine"), this);
    fresh->setObjectName(QStringLiteral("newPlanForThisMachine"));
    fresh->setToolTip(tr("A small GPT with one data-parallel rank per CPU core of this machine, ready to launch"));
    auto *open = new QPushButton(tr("Open a plan…"), this);
    start->addWidget(fresh);
    start->addWidget(open);
    start->addSpacing(12);
    start->addWidget(heading(tr("Examples"), this));
    start->addWidget(m_examples, 1);
    layout->addLayout(start, 1, 0);

    auto *recent = new QVBoxLayout;
    recent->addWidget(heading(tr("Recent plans"), this));
    recent->addWidget(m_recentPlans, 1);
    recent->addSpacing(12);
    recent->addWidget(heading(tr("Recent runs"), this));
    recent->addWidget(m_recentRuns, 1);
    layout->addLayout(recent, 1, 1);
    layout->setColumnStretch(0, 1);
    layout->setColumnStretch(1, 1);
    layout->setRowStretch(1, 1);

    connect(fresh, &QPushButton::clicked, this, &StartPage::newPlanRequested);
    connect(open, &QPushButton::clicked, this, &StartPage::openPlanRequested);
    auto choosePlan = [this](QListWidgetItem *item) {
        if (const QString path = item->data(Qt::UserRole).toString(); !path.isEmpty())
            emit planChosen(path);
    };
    connect(m_examples, &QListWidget::itemClicked, this, choosePlan);
    connect(m_recentPlans, &QListWidget::itemClicked, this, choosePlan);
    connect(m_recentRuns, &QListWidget::itemClicked, this, [this](QListWidgetItem *item) {
        if (const QString id = item->data(Qt::UserRole).toString(); !id.isEmpty())
            emit runChosen(id);
    });
    setRecentPlans({});
    setRecentRuns({});
}

QString StartPage::describeExample(const QString &path)
{
    const QString name = QFileInfo(path).completeBaseName();
    static const std::pair<const char *, const char *> known[] = {
        {"quickstart", QT_TR_NOOP("A tiny GPT on this machine's CPU, 4 data-parallel ranks: the first run to try")},
        {"pipeline-cpu", QT_TR_NOOP("Two pipeline stages with the 1F1B schedule: watch the bubble in the step timeline")},
        {"tensor-cpu", QT_TR_NOOP("Tensor parallelism over 2 ranks with sequence parallelism")},
        {"context-cpu", QT_TR_NOOP("Context parallelism: each sequence split over 2 ranks, zigzag layout")},
        {"experts-cpu", QT_TR_NOOP("Mixture of experts: 4 experts over 2 expert-parallel ranks, top-2 routing")},
        {"llama-cpu", QT_TR_NOOP("A small llama (RMSNorm, SwiGLU, grouped-query attention) with tensor parallelism")},
        {"llama2-70b-dgx-h100", QT_TR_NOOP("Llama 2 70B on 16 DGX H100 nodes (128 GPUs): estimate and search, not run here")},
        {"quickstart-cuda", QT_TR_NOOP("The quick start on one CUDA GPU")},
    };
    for (const auto &[file, line] : known)
        if (name == QLatin1String(file))
            return tr(line);
    const auto loaded = plan::loadPlanFile(path.toStdString());
    if (!loaded)
        return tr("A plan that does not load: %1").arg(QString::fromStdString(loaded.errorText()).section(QLatin1Char('\n'), 0, 0));
    const plan::Plan &p = loaded.value();
    return tr("%1 · %2 ranks").arg(QString::fromStdString(p.model.preset.empty() ? p.model.arch : p.model.preset)).arg(p.parallel.worldSize());
}

void StartPage::setExamplesDirectory(const QString &directory)
{
    m_examples->clear();
    QStringList paths;
    QDirIterator it(directory, {QStringLiteral("*.json")}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        paths << it.next();
    // The quick start first, then the CPU plans, then those for GPU clusters.
    std::sort(paths.begin(), paths.end(), [](const QString &a, const QString &b) {
        auto key = [](const QString &p) {
            return std::make_tuple(!p.endsWith(QLatin1String("/quickstart.json")), p.contains(QLatin1String("/gpu/")), p);
        };
        return key(a) < key(b);
    });
    for (const QString &path : paths) {
        auto *item = new QListWidgetItem(QStringLiteral("%1 — %2").arg(QFileInfo(path).completeBaseName(), describeExample(path)), m_examples);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
}

void StartPage::setRecentPlans(const QStringList &paths)
{
    m_recentPlans->clear();
    for (const QString &path : paths) {
        if (!QFileInfo::exists(path))
            continue;
        auto *item = new QListWidgetItem(QStringLiteral("%1 — %2").arg(QFileInfo(path).fileName(), QFileInfo(path).absolutePath()),
                                         m_recentPlans);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
    if (m_recentPlans->count() == 0)
        new QListWidgetItem(tr("No plan opened yet: start from an example or a new plan."), m_recentPlans);
}

void StartPage::setRecentRuns(const QList<launcher::RunSummary> &runs)
{
    m_recentRuns->clear();
    for (const launcher::RunSummary &run : runs.mid(0, 12)) {
        // One arg() for every field: a run's name holding "%4" stays as it is.
        auto *item = new QListWidgetItem(tr("%1 · %2 · %3 · %4 ranks · %5 of %6 steps%7")
                                             .arg(run.runId, run.name, statusText(run.status), QString::number(run.worldSize),
                                                  QString::number(run.stepsDone), QString::number(run.totalSteps),
                                                  run.stepsDone > 0 ? tr(" · loss %1").arg(run.lastLoss, 0, 'f', 3) : QString()),
                                         m_recentRuns);
        item->setData(Qt::UserRole, run.runId);
    }
    if (m_recentRuns->count() == 0)
        new QListWidgetItem(tr("No run in this history yet: launch a plan (Run › Launch, Ctrl+R)."), m_recentRuns);
}

} // namespace trellis::ui::workspace
