// See dashboard_grid.h.
#include "ui/workspace/dashboard_grid.h"

#include "ui/dashboards/panel.h"
#include "ui/workspace/panel_frame.h"

#include <QDockWidget>
#include <QDragEnterEvent>
#include <QMainWindow>
#include <QKeyEvent>
#include <QGridLayout>
#include <QMimeData>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QStackedWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace trellis::ui::workspace {

namespace {
constexpr int kLayoutVersion = 1;
constexpr int kMinPanelHeight = 220;
constexpr int kColumnWidth = 560; // a column per this many pixels of width, up to three
const QString kVersionKey = QStringLiteral("workbench/grid/version");
const QString kPanelsKey = QStringLiteral("workbench/grid/panels");
const QString kCollapsedKey = QStringLiteral("workbench/grid/collapsed");
} // namespace

DashboardGrid::DashboardGrid(QWidget *parent)
    : QWidget(parent), m_stack(new QStackedWidget(this)), m_scroll(new QScrollArea(m_stack)), m_content(new QWidget),
      m_grid(new QGridLayout(m_content)), m_maximisedHolder(new QWidget(m_stack))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(m_content);
    m_grid->setContentsMargins(6, 6, 6, 6);
    m_grid->setSpacing(8);
    auto *holder = new QVBoxLayout(m_maximisedHolder);
    holder->setContentsMargins(6, 6, 6, 6);
    m_stack->addWidget(m_scroll);
    m_stack->addWidget(m_maximisedHolder);
    m_scroll->viewport()->installEventFilter(this);
    connect(m_scroll->verticalScrollBar(), &QScrollBar::valueChanged, this, [this] { catchUp(); });
    m_catchUpTimer = new QTimer(this);
    m_catchUpTimer->setSingleShot(true);
    m_catchUpTimer->setInterval(kCatchUpMs);
    connect(m_catchUpTimer, &QTimer::timeout, this, [this] { catchUp(); });
    auto *escape = new QShortcut(QKeySequence(Qt::Key_Escape), this, this, &DashboardGrid::restoreFromMaximised);
    escape->setContext(Qt::WidgetWithChildrenShortcut);
}

void DashboardGrid::addSection(const QString &id, const QString &title)
{
    Section s;
    s.id = id;
    s.title = title;
    s.box = new QWidget(m_content);
    s.box->setObjectName(QStringLiteral("section-") + id);
    auto *box = new QVBoxLayout(s.box);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    s.header = new QToolButton(s.box);
    s.header->setObjectName(QStringLiteral("header-") + id);
    s.header->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    s.header->setAutoRaise(true);
    s.header->setAcceptDrops(true);
    s.header->setToolTip(tr("Click to collapse or expand; drop a panel here to move it into this section"));
    QFont bold = s.header->font();
    bold.setBold(true);
    s.header->setFont(bold);
    s.header->installEventFilter(this);
    connect(s.header, &QToolButton::clicked, this, [this, id] { setCollapsed(id, !isCollapsed(id)); });
    s.body = new QWidget(s.box);
    new QGridLayout(s.body);
    s.body->layout()->setContentsMargins(0, 0, 0, 0);
    s.body->layout()->setSpacing(8);
    box->addWidget(s.header, 0, Qt::AlignLeft);
    box->addWidget(s.body, 1);
    m_sections.push_back(s);
    updateHeader(m_sections.back());
    relayout();
}

void DashboardGrid::addPanel(const QString &sectionId, dashboards::Panel *panel)
{
    Section *s = section(sectionId);
    if (!s)
        return;
    auto *frame = new PanelFrame(panel, s->body);
    connect(frame, &PanelFrame::maximiseToggled, this, [this](PanelFrame *f) {
        if (m_maximised == f->panelId())
            restoreFromMaximised();
        else
            maximise(f->panelId());
    });
    connect(frame, &PanelFrame::dropped, this, [this](const QString &id, PanelFrame *onto) { movePanel(id, onto->panelId()); });
    connect(frame, &PanelFrame::resetZoomRequested, this, &DashboardGrid::resetStepRange);
    connect(frame, &PanelFrame::windowRequested, this, [this](PanelFrame *f) { openInWindow(f->panelId()); });
    s->frames.push_back(frame);
    m_defaultPlaces.emplace_back(sectionId, panel->objectId());
    frame->setEmptyText(panel->emptyText(nullptr));
    watchStepPlots(frame);
    updateHeader(*s);
    relayout();
}

DashboardGrid::Section *DashboardGrid::section(const QString &id)
{
    for (Section &s : m_sections)
        if (s.id == id)
            return &s;
    return nullptr;
}

const DashboardGrid::Section *DashboardGrid::section(const QString &id) const
{
    return const_cast<DashboardGrid *>(this)->section(id);
}

PanelFrame *DashboardGrid::frame(const QString &panelId) const
{
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            if (f->panelId() == panelId)
                return f;
    return nullptr;
}

QStringList DashboardGrid::sectionIds() const
{
    QStringList ids;
    for (const Section &s : m_sections)
        ids << s.id;
    return ids;
}

QString DashboardGrid::sectionOf(const QString &panelId) const
{
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            if (f->panelId() == panelId)
                return s.id;
    return {};
}

QStringList DashboardGrid::panelsIn(const QString &sectionId) const
{
    QStringList ids;
    if (const Section *s = section(sectionId))
        for (PanelFrame *f : s->frames)
            ids << f->panelId();
    return ids;
}

void DashboardGrid::updateHeader(Section &s)
{
    s.header->setArrowType(s.collapsed ? Qt::RightArrow : Qt::DownArrow);
    s.header->setText(s.collapsed ? tr("%1 (%n panel(s))", nullptr, static_cast<int>(s.frames.size())).arg(s.title) : s.title);
}

std::pair<int, int> DashboardGrid::shapeFor(const QSize &viewport) const
{
    // Columns by the width; two rows of panels on screen, each under its section's header.
    const int header = m_sections.empty() ? 24 : m_sections.front().header->sizeHint().height();
    return {std::clamp(viewport.width() / kColumnWidth, 1, 3),
            std::max(kMinPanelHeight, (viewport.height() - 2 * m_grid->contentsMargins().top() - 2 * header - 3 * m_grid->spacing()) / 2)};
}

void DashboardGrid::relayout()
{
    std::tie(m_columns, m_panelHeight) = shapeFor(m_scroll->viewport()->size());
    while (m_grid->count() > 0)
        delete m_grid->takeAt(0);
    int row = 0, column = 0;
    for (Section &s : m_sections) {
        std::vector<PanelFrame *> shown;
        for (PanelFrame *f : s.frames)
            if (f->panelId() != m_maximised && !m_inWindows.contains(f->panelId()))
                shown.push_back(f);
        const int span = s.collapsed || shown.empty() ? 1 : std::min<int>(static_cast<int>(shown.size()), m_columns);
        auto *body = static_cast<QGridLayout *>(s.body->layout());
        while (body->count() > 0)
            delete body->takeAt(0);
        for (std::size_t i = 0; i < shown.size(); ++i)
            body->addWidget(shown[i], static_cast<int>(i) / span, static_cast<int>(i) % span);
        const int rows = shown.empty() ? 0 : (static_cast<int>(shown.size()) + span - 1) / span;
        s.body->setVisible(!s.collapsed && rows > 0);
        s.body->setFixedHeight(std::max(0, rows * m_panelHeight + (rows - 1) * body->spacing()));
        if (column + span > m_columns) {
            ++row;
            column = 0;
        }
        m_grid->addWidget(s.box, row, column, 1, span, Qt::AlignTop);
        column += span;
        if (column >= m_columns) {
            ++row;
            column = 0;
        }
    }
    for (int c = 0; c < 3; ++c)
        m_grid->setColumnStretch(c, c < m_columns ? 1 : 0);
    for (int r = 0; r < m_grid->rowCount(); ++r)
        m_grid->setRowStretch(r, 0);
    m_grid->setRowStretch(row + 1, 1); // the sections pack at the top
    QTimer::singleShot(0, this, [this] { catchUp(); });
}

bool DashboardGrid::isOnScreen(const PanelFrame *f) const
{
    return f && f->isVisible() && !f->visibleRegion().isEmpty();
}

void DashboardGrid::showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    m_snapshot = snapshot;
    ++m_generation;
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            f->setEmptyText(f->panel()->emptyText(m_snapshot.get()));
    catchUp(kPanelsPerSnapshot);
}

void DashboardGrid::refreshEmptyStates()
{
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            f->setEmptyText(f->panel()->emptyText(m_snapshot.get()));
    catchUp();
}

void DashboardGrid::catchUp(int budget)
{
    if (!m_snapshot)
        return;
    std::vector<PanelFrame *> stale; // on screen, behind the newest snapshot; the longest-waiting first
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            if (f->showsPanel() && isOnScreen(f) && m_drawn[f] != m_generation)
                stale.push_back(f);
    std::stable_sort(stale.begin(), stale.end(), [this](PanelFrame *a, PanelFrame *b) { return m_drawn[a] < m_drawn[b]; });
    if (static_cast<int>(stale.size()) > budget) {
        stale.resize(static_cast<std::size_t>(budget));
        m_catchUpTimer->start(); // the rest, if no newer snapshot comes first
    }
    for (PanelFrame *f : stale) {
        f->panel()->show(m_snapshot);
        applyRange(f->panel());
        m_drawn[f] = m_generation;
        if (m_cursor >= 0)
            for (QCustomPlot *plot : f->panel()->stepPlots())
                dashboards::showCursorOn(plot, m_cursor);
    }
}

void DashboardGrid::applyRange(dashboards::Panel *panel)
{
    if (!m_pinned)
        return;
    for (QCustomPlot *plot : panel->stepPlots())
        if (plot->xAxis->range() != m_range) {
            plot->xAxis->setRange(m_range);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
}

void DashboardGrid::watchStepPlots(PanelFrame *f)
{
    dashboards::Panel *panel = f->panel();
    for (QCustomPlot *plot : panel->findChildren<QCustomPlot *>()) {
        plot->installEventFilter(this);
        connect(plot, &QCustomPlot::mouseMove, this, [this, plot, panel](QMouseEvent *event) {
            if (!panel->stepPlots().contains(plot))
                return;
            if (event->buttons() & Qt::LeftButton) { // dragging the range: all step charts follow
                setStepRange(plot->xAxis->range());
                return;
            }
            const double step = std::round(plot->xAxis->pixelToCoord(event->position().x()));
            if (plot->axisRect()->rect().contains(event->position().toPoint()))
                setCursorStep(step);
            else
                setCursorStep(-1);
        });
        connect(plot, &QCustomPlot::mouseWheel, this, [this, plot, panel] {
            if (panel->stepPlots().contains(plot)) // the plot zooms after this signal
                QTimer::singleShot(0, this, [this, plot] { setStepRange(plot->xAxis->range()); });
        });
    }
}

void DashboardGrid::setCursorStep(double step)
{
    if (step == m_cursor)
        return;
    m_cursor = step;
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            if (f->showsPanel() && isOnScreen(f))
                for (QCustomPlot *plot : f->panel()->stepPlots())
                    dashboards::showCursorOn(plot, step);
    emit cursorMoved(step < 0 ? -1 : static_cast<qint64>(step));
}

void DashboardGrid::setStepRange(const QCPRange &range)
{
    m_pinned = true;
    m_range = range;
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            if (f->showsPanel() && isOnScreen(f))
                applyRange(f->panel());
}

void DashboardGrid::resetStepRange()
{
    m_pinned = false;
    m_drawn.clear(); // drawn again, each chart's x-range fitting its steps
    catchUp();
}

void DashboardGrid::setCollapsed(const QString &sectionId, bool collapsed)
{
    Section *s = section(sectionId);
    if (!s || s->collapsed == collapsed)
        return;
    s->collapsed = collapsed;
    updateHeader(*s);
    relayout();
    emit layoutChanged();
}

bool DashboardGrid::isCollapsed(const QString &sectionId) const
{
    const Section *s = section(sectionId);
    return s && s->collapsed;
}

bool DashboardGrid::movePanel(const QString &panelId, const QString &beforePanelId, const QString &sectionId)
{
    PanelFrame *moving = frame(panelId);
    const QString target = beforePanelId.isEmpty() ? sectionId : sectionOf(beforePanelId);
    Section *to = section(target);
    if (!moving || !to || panelId == beforePanelId)
        return false;
    Section *from = section(sectionOf(panelId));
    from->frames.erase(std::find(from->frames.begin(), from->frames.end(), moving));
    auto at = std::find_if(to->frames.begin(), to->frames.end(), [&](PanelFrame *f) { return f->panelId() == beforePanelId; });
    to->frames.insert(at, moving);
    updateHeader(*from);
    updateHeader(*to);
    relayout();
    emit layoutChanged();
    return true;
}

bool DashboardGrid::maximise(const QString &panelId)
{
    PanelFrame *f = frame(panelId);
    if (!f)
        return false;
    if (!m_maximised.isEmpty())
        restoreFromMaximised();
    m_maximised = panelId;
    relayout(); // takes it out of its section
    m_maximisedHolder->layout()->addWidget(f);
    f->setMaximised(true);
    f->show();
    m_stack->setCurrentWidget(m_maximisedHolder);
    m_drawn.erase(f);
    QTimer::singleShot(0, this, [this] { catchUp(); });
    return true;
}

void DashboardGrid::restoreFromMaximised()
{
    if (m_maximised.isEmpty())
        return;
    PanelFrame *f = frame(m_maximised);
    m_maximised.clear();
    if (f) {
        m_maximisedHolder->layout()->removeWidget(f);
        f->setMaximised(false);
    }
    m_stack->setCurrentWidget(m_scroll);
    relayout();
    if (f)
        QTimer::singleShot(0, this, [this, f] { m_scroll->ensureWidgetVisible(f, 0, 0); });
}

bool DashboardGrid::openInWindow(const QString &panelId)
{
    PanelFrame *f = frame(panelId);
    auto *main = qobject_cast<QMainWindow *>(window());
    if (!f || !main || m_inWindows.contains(panelId))
        return false;
    if (m_maximised == panelId)
        restoreFromMaximised();
    m_inWindows.insert(panelId);
    relayout(); // out of its section's layout
    auto *dock = new QDockWidget(f->panel()->title(), main);
    dock->setObjectName(QStringLiteral("window-") + panelId);
    dock->setWidget(f);
    dock->installEventFilter(this);
    main->addDockWidget(Qt::RightDockWidgetArea, dock);
    dock->setFloating(true);
    dock->resize(720, 420);
    dock->show();
    f->show();
    m_drawn.erase(f);
    QTimer::singleShot(0, this, [this] { catchUp(); });
    return true;
}

void DashboardGrid::backToGrid(const QString &panelId)
{
    if (!m_inWindows.remove(panelId))
        return;
    PanelFrame *f = frame(panelId);
    auto *dock = qobject_cast<QDockWidget *>(f->parentWidget());
    f->setParent(m_content); // taken back before the dock goes
    relayout();
    f->show();
    if (dock) {
        dock->removeEventFilter(this);
        dock->hide();
        dock->deleteLater();
    }
}

bool DashboardGrid::reveal(const QString &panelId)
{
    PanelFrame *f = frame(panelId);
    if (!f)
        return false;
    if (!m_maximised.isEmpty() && m_maximised != panelId)
        restoreFromMaximised();
    setCollapsed(sectionOf(panelId), false);
    QTimer::singleShot(0, this, [this, f] {
        m_scroll->ensureWidgetVisible(f, 0, 0);
        catchUp();
    });
    return true;
}

void DashboardGrid::saveLayout(QSettings &settings) const
{
    QStringList panels, collapsed;
    for (const Section &s : m_sections) {
        for (PanelFrame *f : s.frames)
            panels << s.id + QLatin1Char('/') + f->panelId();
        if (s.collapsed)
            collapsed << s.id;
    }
    settings.setValue(kVersionKey, kLayoutVersion);
    settings.setValue(kPanelsKey, panels);
    settings.setValue(kCollapsedKey, collapsed);
}

void DashboardGrid::restoreLayout(const QSettings &settings)
{
    if (settings.value(kVersionKey).toInt() != kLayoutVersion)
        return; // none saved, or an older version's: the default stands
    std::map<QString, PanelFrame *> frames;
    for (const Section &s : m_sections)
        for (PanelFrame *f : s.frames)
            frames[f->panelId()] = f;
    std::map<QString, std::vector<PanelFrame *>> placed;
    std::set<QString> seen;
    for (const QString &entry : settings.value(kPanelsKey).toStringList()) {
        const QString sectionId = entry.section(QLatin1Char('/'), 0, 0), panelId = entry.section(QLatin1Char('/'), 1);
        const auto it = frames.find(panelId);
        if (!section(sectionId) || it == frames.end() || !seen.insert(panelId).second)
            continue; // a section or panel this version does not have, or a panel named twice
        placed[sectionId].push_back(it->second);
    }
    for (const auto &[sectionId, panelId] : m_defaultPlaces) // what the saved layout does not place
        if (!seen.count(panelId))
            placed[sectionId].push_back(frames[panelId]);
    for (Section &s : m_sections) {
        s.frames = placed[s.id];
        s.collapsed = false;
    }
    for (const QString &id : settings.value(kCollapsedKey).toStringList())
        if (Section *s = section(id))
            s->collapsed = true;
    for (Section &s : m_sections)
        updateHeader(s);
    relayout();
}

void DashboardGrid::resetLayout()
{
    std::map<QString, PanelFrame *> frames;
    for (Section &s : m_sections) {
        for (PanelFrame *f : s.frames)
            frames[f->panelId()] = f;
        s.frames.clear();
        s.collapsed = false;
    }
    for (const auto &[sectionId, panelId] : m_defaultPlaces)
        section(sectionId)->frames.push_back(frames[panelId]);
    for (Section &s : m_sections)
        updateHeader(s);
    relayout();
    emit layoutChanged();
}

bool DashboardGrid::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_scroll->viewport() && event->type() == QEvent::Resize) {
        if (shapeFor(m_scroll->viewport()->size()) != std::pair(m_columns, m_panelHeight))
            relayout();
        else
            QTimer::singleShot(0, this, [this] { catchUp(); });
        return false;
    }
    if (auto *dock = qobject_cast<QDockWidget *>(watched); dock && event->type() == QEvent::Close) {
        backToGrid(dock->objectName().mid(7)); // "window-" + the panel's id
        return false;
    }
    if (auto *plot = qobject_cast<QCustomPlot *>(watched); plot && event->type() == QEvent::Leave) {
        setCursorStep(-1);
        return false;
    }
    for (Section &s : m_sections) {
        if (watched != s.header)
            continue;
        if (event->type() == QEvent::DragEnter) {
            auto *enter = static_cast<QDragEnterEvent *>(event);
            if (enter->mimeData()->hasFormat(QString::fromLatin1(PanelFrame::kMimeType)))
                enter->acceptProposedAction();
            return true;
        }
        if (event->type() == QEvent::Drop) {
            auto *drop = static_cast<QDropEvent *>(event);
            drop->acceptProposedAction();
            movePanel(QString::fromUtf8(drop->mimeData()->data(QString::fromLatin1(PanelFrame::kMimeType))), {}, s.id);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void DashboardGrid::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape && !m_maximised.isEmpty()) {
        restoreFromMaximised();
        event->accept();
        return;
    }
    QWidget::keyPressEvent(event);
}

void DashboardGrid::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    QTimer::singleShot(0, this, [this] { catchUp(); });
}

} // namespace trellis::ui::workspace
