// See panel_frame.h.
#include "ui/workspace/panel_frame.h"

#include "ui/dashboards/panel.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QClipboard>
#include <QDrag>
#include <QFileDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QStackedLayout>
#include <QStyle>
#include <QSvgGenerator>
#include <QToolButton>
#include <QVBoxLayout>

namespace trellis::ui::workspace {

namespace {

// The charts of a panel: those it draws over steps first, then any other.
QList<QCustomPlot *> chartsOf(const dashboards::Panel *panel)
{
    QList<QCustomPlot *> charts = panel->stepPlots();
    for (QCustomPlot *plot : panel->findChildren<QCustomPlot *>())
        if (!charts.contains(plot) && plot->isVisibleTo(const_cast<dashboards::Panel *>(panel)))
            charts << plot;
    return charts;
}

} // namespace

PanelFrame::PanelFrame(dashboards::Panel *panel, QWidget *parent)
    : QFrame(parent), m_panel(panel), m_titleBar(new QWidget(this)), m_title(new QLabel(panel->title(), m_titleBar)),
      m_maximise(new QToolButton(m_titleBar)), m_stack(new QStackedLayout), m_empty(new QLabel(this))
{
    setObjectName(QStringLiteral("frame-") + panel->objectId());
    m_title->setObjectName(QStringLiteral("panelTitle"));
    setFrameShape(QFrame::StyledPanel);
    setAcceptDrops(true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(1, 1, 1, 1);
    layout->setSpacing(0);

    auto *bar = new QHBoxLayout(m_titleBar);
    bar->setContentsMargins(6, 2, 2, 2);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setToolTip(tr("Drag to move the panel; double-click to maximise it (Esc returns)"));
    m_title->setMinimumWidth(m_title->fontMetrics().horizontalAdvance(panel->title()) + 4); // never cut
    bar->addWidget(m_title, 1);
    m_maximise->setAutoRaise(true);
    m_maximise->setIcon(style()->standardIcon(QStyle::SP_TitleBarMaxButton));
    m_maximise->setToolTip(tr("Maximise (double-click the title; Esc returns)"));
    connect(m_maximise, &QToolButton::clicked, this, [this] { emit maximiseToggled(this); });
    auto *more = new QToolButton(m_titleBar);
    more->setAutoRaise(true);
    more->setText(QStringLiteral("⋯"));
    more->setToolTip(tr("Copy or save the chart"));
    more->setPopupMode(QToolButton::InstantPopup);
    auto *menu = new QMenu(more);
    menu->addAction(tr("Copy image"), this, &PanelFrame::copyImage);
    menu->addAction(tr("Save as PNG…"), this, [this] { saveImageAs(QStringLiteral("png")); });
    menu->addAction(tr("Save as SVG…"), this, [this] { saveImageAs(QStringLiteral("svg")); });
    menu->addSeparator();
    menu->addAction(tr("Open in a window"), this, [this] { emit windowRequested(this); });
    menu->addAction(tr("Reset zoom of the step charts"), this, &PanelFrame::resetZoomRequested);
    more->setMenu(menu);
    bar->addWidget(m_maximise);
    bar->addWidget(more);
    m_titleBar->installEventFilter(this);
    m_title->installEventFilter(this);
    layout->addWidget(m_titleBar);

    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setMargin(16);
    m_empty->setObjectName(QStringLiteral("emptyState"));
    m_empty->setForegroundRole(QPalette::PlaceholderText);
    m_stack->addWidget(panel);
    m_stack->addWidget(m_empty);
    layout->addLayout(m_stack, 1);
    for (QCustomPlot *plot : panel->findChildren<QCustomPlot *>())
        connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] { emit maximiseToggled(this); });
}

QString PanelFrame::panelId() const { return m_panel->objectId(); }

void PanelFrame::setEmptyText(const QString &text)
{
    m_empty->setText(text);
    m_stack->setCurrentWidget(text.isEmpty() ? static_cast<QWidget *>(m_panel) : m_empty);
}

QString PanelFrame::emptyText() const { return showsPanel() ? QString() : m_empty->text(); }

bool PanelFrame::showsPanel() const { return m_stack->currentWidget() == m_panel; }

void PanelFrame::setMaximised(bool maximised)
{
    m_maximise->setIcon(style()->standardIcon(maximised ? QStyle::SP_TitleBarNormalButton : QStyle::SP_TitleBarMaxButton));
    m_maximise->setToolTip(maximised ? tr("Back to the grid (Esc)") : tr("Maximise (double-click the title; Esc returns)"));
}

QImage PanelFrame::image() const
{
    QWidget *source = showsPanel() ? static_cast<QWidget *>(m_panel) : m_empty;
    const QList<QCustomPlot *> charts = showsPanel() ? chartsOf(m_panel) : QList<QCustomPlot *> {};
    if (charts.size() == 1)
        return charts.front()->toPixmap().toImage();
    return source->grab().toImage();
}

QString PanelFrame::saveImage(const QString &path) const
{
    if (path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        const QList<QCustomPlot *> charts = showsPanel() ? chartsOf(m_panel) : QList<QCustomPlot *> {};
        QWidget *source = charts.size() == 1 ? static_cast<QWidget *>(charts.front())
                          : showsPanel()    ? static_cast<QWidget *>(m_panel)
                                            : m_empty;
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(source->size());
        svg.setViewBox(QRect(QPoint(0, 0), source->size()));
        svg.setTitle(m_panel->title());
        QCPPainter painter;
        if (!painter.begin(&svg))
            return tr("cannot write %1").arg(path);
        painter.setMode(QCPPainter::pmVectorized);
        painter.setMode(QCPPainter::pmNoCaching);
        if (charts.size() == 1) // the chart's own vectors, not its screen buffer
            charts.front()->toPainter(&painter, source->width(), source->height());
        else
            source->render(&painter);
        painter.end();
        return QFileInfo(path).size() > 0 ? QString() : tr("cannot write %1").arg(path);
    }
    const QImage picture = image();
    return picture.save(path, "PNG") ? QString() : tr("cannot write %1").arg(path);
}

void PanelFrame::copyImage() const { QApplication::clipboard()->setImage(image()); }

void PanelFrame::saveImageAs(const QString &format)
{
    const QString suggested = QStringLiteral("trellis-%1.%2").arg(panelId(), format);
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the chart"), suggested,
                                                      format == QLatin1String("svg") ? tr("SVG (*.svg)") : tr("PNG (*.png)"));
    if (path.isEmpty())
        return;
    if (const QString error = saveImage(path); !error.isEmpty())
        QMessageBox::warning(this, tr("Not saved"), error);
}

bool PanelFrame::eventFilter(QObject *watched, QEvent *event)
{
    // The title bar: double-click maximises, a drag carries the panel's id to another frame.
    if (watched != m_titleBar && watched != m_title)
        return QFrame::eventFilter(watched, event);
    switch (event->type()) {
    case QEvent::MouseButtonDblClick:
        emit maximiseToggled(this);
        return true;
    case QEvent::MouseButtonPress:
        m_pressAt = static_cast<QMouseEvent *>(event)->position().toPoint();
        break;
    case QEvent::MouseMove: {
        auto *move = static_cast<QMouseEvent *>(event);
        if (!(move->buttons() & Qt::LeftButton) ||
            (move->position().toPoint() - m_pressAt).manhattanLength() < QApplication::startDragDistance())
            break;
        auto *drag = new QDrag(this);
        auto *mime = new QMimeData;
        mime->setData(QString::fromLatin1(kMimeType), panelId().toUtf8());
        drag->setMimeData(mime);
        drag->setPixmap(m_titleBar->grab());
        drag->exec(Qt::MoveAction);
        return true;
    }
    default:
        break;
    }
    return QFrame::eventFilter(watched, event);
}

void PanelFrame::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasFormat(QString::fromLatin1(kMimeType)))
        event->acceptProposedAction();
}

void PanelFrame::dropEvent(QDropEvent *event)
{
    const QString id = QString::fromUtf8(event->mimeData()->data(QString::fromLatin1(kMimeType)));
    event->acceptProposedAction();
    if (id != panelId())
        emit dropped(id, this);
}

} // namespace trellis::ui::workspace
