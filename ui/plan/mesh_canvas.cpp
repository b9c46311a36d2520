// See mesh_canvas.h.
#include "ui/plan/mesh_canvas.h"

#include "launcher/document/plan_document.h"
#include "ui/plan/mesh_view.h"
#include "ui/plan/field_table.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>
#include <numeric>

namespace trellis::ui::plan_editor {
namespace {

const char *const kAxes[] = {"dp", "tp", "pp", "cp", "ep"};

// A spin box whose arrows step through a list of offered values (typing any value still works).
class DegreeSpinBox : public QSpinBox {
public:
    DegreeSpinBox(std::function<std::vector<int>()> offered, QWidget *parent) : QSpinBox(parent), m_offered(std::move(offered))
    {
        setRange(1, 65536);
        setKeyboardTracking(false);
    }
    void stepBy(int steps) override
    {
        const std::vector<int> offered = m_offered();
        int v = value();
        for (; steps > 0; --steps) {
            const auto next = std::upper_bound(offered.begin(), offered.end(), v);
            if (next == offered.end())
                break;
            v = *next;
        }
        for (; steps < 0; ++steps) {
            const auto next = std::lower_bound(offered.begin(), offered.end(), v);
            if (next == offered.begin())
                break;
            v = *std::prev(next);
        }
        setValue(v);
    }

protected:
    StepEnabled stepEnabled() const override
    {
        const std::vector<int> offered = m_offered();
        StepEnabled enabled = StepNone;
        if (!offered.empty() && offered.back() > value())
            enabled |= StepUpEnabled;
        if (!offered.empty() && offered.front() < value())
            enabled |= StepDownEnabled;
        return enabled;
    }

private:
    std::function<std::vector<int>()> m_offered;
};

int degreeOf(const plan::ParallelSpec &ps, const QString &axis)
{
    if (axis == QLatin1String("dp"))
        return ps.dp;
    if (axis == QLatin1String("tp"))
        return ps.tp;
    if (axis == QLatin1String("pp"))
        return ps.pp;
    if (axis == QLatin1String("cp"))
        return ps.cp;
    return ps.ep;
}

} // namespace

std::vector<int> MeshCanvas::offeredDegrees(const plan::Plan &p, const QString &axis, bool keepWorld)
{
    const plan::ParallelSpec &ps = p.parallel;
    std::vector<int> out;
    if (axis == QLatin1String("dp")) {
        for (int d = 1; d <= 4096; ++d)
            out.push_back(d);
        return out;
    }
    if (axis == QLatin1String("ep")) { // divides dp, and the experts of a mixture-of-experts model
        for (int d : divisorsOf(std::max(1, ps.dp)))
            if (d == 1 || (p.model.moe.experts > 0 && p.model.moe.experts % d == 0))
                out.push_back(d);
        return out;
    }
    if (axis == QLatin1String("tp"))
        out = divisorsOf(std::gcd(std::max(1, p.model.heads), std::max(1, p.model.kvHeads)));
    else if (axis == QLatin1String("pp"))
        for (int d = 1; d <= std::max(1, p.model.layers); ++d)
            out.push_back(d);
    else if (axis == QLatin1String("cp"))
        for (int d = 1; d <= 64; ++d)
            out.push_back(d);
    if (!keepWorld)
        return out;
    // The rest of the world, without this axis and dp: a degree is offered when it divides what is left.
    const long long others = static_cast<long long>(ps.tp) * ps.pp * ps.cp / std::max(1, degreeOf(ps, axis));
    const long long world = ps.worldSize();
    std::vector<int> kept;
    for (int d : out)
        if (world % (others * d) == 0)
            kept.push_back(d);
    return kept.empty() ? out : kept;
}

MeshCanvas::MeshCanvas(launcher::document::PlanDocument *document, QWidget *parent)
    : QWidget(parent), m_document(document), m_view(new MeshView(this)), m_scroll(new QScrollArea(this)),
      m_axis(new QComboBox(this)), m_keepWorld(new QCheckBox(tr("keep the world size"), this)), m_zoomOut(new QToolButton(this)),
      m_zoomIn(new QToolButton(this)), m_fit(new QToolButton(this)), m_zoomLabel(new QLabel(this)), m_selection(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    // Three to a row, with "keep the world size" after the last: in one row they made the left
    // dock (and the window) wider than a 1280-pixel screen.
    auto *degrees = new QGridLayout;
    int column = 0;
    for (const char *name : kAxes) {
        const QString axis = QString::fromLatin1(name);
        auto *spin = new DegreeSpinBox([this, axis] { return offeredDegrees(m_document->plan(), axis, m_keepWorld->isChecked()); }, this);
        spin->setPrefix(axis + QLatin1Char(' '));
        spin->setObjectName(QStringLiteral("mesh_") + axis);
        spin->setToolTip(axis == QLatin1String("dp")   ? tr("Data-parallel degree: replicas of the model")
                         : axis == QLatin1String("tp") ? tr("Tensor-parallel degree: the arrows offer the divisors of the attention heads")
                         : axis == QLatin1String("pp") ? tr("Pipeline stages: the arrows offer up to the model's layers")
                         : axis == QLatin1String("cp") ? tr("Context-parallel degree: the sequence split across ranks")
                                                       : tr("Expert-parallel degree: divides dp and the experts"));
        connect(spin, &QSpinBox::valueChanged, this, [this, axis](int v) {
            if (!m_refreshing)
                changeDegree(axis, v);
        });
        m_steppers.insert(axis, spin);
        degrees->addWidget(spin, column / 3, column % 3);
        ++column;
    }
    m_keepWorld->setChecked(true);
    m_keepWorld->setToolTip(tr("Changing tp, pp or cp sets dp so that the ranks fill the same devices"));
    degrees->addWidget(m_keepWorld, column / 3, column % 3, 1, 2);
    degrees->setColumnStretch(3, 1);
    layout->addLayout(degrees);

    auto *view = new QHBoxLayout;
    view->addWidget(new QLabel(tr("Colour by"), this));
    const struct {
        MeshView::Axis axis;
    } axes[] = {{MeshView::Axis::Stage}, {MeshView::Axis::Tp}, {MeshView::Axis::Cp}, {MeshView::Axis::Dp}, {MeshView::Axis::Ep}, {MeshView::Axis::Node}};
    for (const auto &a : axes)
        m_axis->addItem(MeshView::axisName(a.axis), static_cast<int>(a.axis));
    connect(m_axis, &QComboBox::currentIndexChanged, this,
            [this](int index) { m_view->setColorAxis(static_cast<MeshView::Axis>(m_axis->itemData(index).toInt())); });
    view->addWidget(m_axis);
    view->addStretch(1);
    m_zoomOut->setText(QStringLiteral("−"));
    m_zoomOut->setToolTip(tr("Zoom out (Ctrl+wheel): node tiles when zoomed far out"));
    m_zoomIn->setText(QStringLiteral("+"));
    m_zoomIn->setToolTip(tr("Zoom in (Ctrl+wheel)"));
    m_fit->setText(tr("Fit"));
    m_fit->setToolTip(tr("Fit the whole cluster into the view"));
    connect(m_zoomOut, &QToolButton::clicked, m_view, &MeshView::zoomOut);
    connect(m_zoomIn, &QToolButton::clicked, m_view, &MeshView::zoomIn);
    connect(m_fit, &QToolButton::clicked, m_view, [this] { m_view->setZoom(-1); });
    connect(m_view, &MeshView::zoomChanged, this, &MeshCanvas::showZoom);
    for (QWidget *w : {static_cast<QWidget *>(m_zoomLabel), static_cast<QWidget *>(m_zoomOut), static_cast<QWidget *>(m_zoomIn),
                       static_cast<QWidget *>(m_fit)})
        view->addWidget(w);
    layout->addLayout(view);

    m_scroll->setWidget(m_view);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->viewport()->installEventFilter(this);
    layout->addWidget(m_scroll, 1);

    m_selection->setWordWrap(true);
    m_selection->setTextFormat(Qt::RichText);
    m_selection->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_selection);
    connect(m_view, &MeshView::rankSelected, this, &MeshCanvas::showSelection);

    connect(m_document, &launcher::document::PlanDocument::changed, this, &MeshCanvas::refresh);
    refresh();
}

bool MeshCanvas::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_scroll->viewport() && event->type() == QEvent::Resize)
        m_view->setFitHeight(m_scroll->viewport()->height());
    return QWidget::eventFilter(watched, event);
}

void MeshCanvas::refresh()
{
    const plan::Plan &p = m_document->plan();
    m_refreshing = true;
    for (const char *name : kAxes) {
        const QString axis = QString::fromLatin1(name);
        m_steppers.value(axis)->setValue(degreeOf(p.parallel, axis));
    }
    m_steppers.value(QStringLiteral("ep"))->setEnabled(p.model.moe.experts > 0 || p.parallel.ep > 1);
    m_refreshing = false;
    m_view->setPlan(p);
    showSelection(m_view->selectedRank());
    showZoom();
}

void MeshCanvas::changeDegree(const QString &axis, int value)
{
    const plan::ParallelSpec &ps = m_document->plan().parallel;
    const QString path = QStringLiteral("parallel.") + axis;
    QString refused;
    if (m_keepWorld->isChecked() && (axis == QLatin1String("tp") || axis == QLatin1String("pp") || axis == QLatin1String("cp"))) {
        const long long rest = static_cast<long long>(ps.tp) * ps.pp * ps.cp / std::max(1, degreeOf(ps, axis)) * value;
        const long long world = ps.worldSize();
        if (rest > 0 && world % rest == 0 && world / rest != ps.dp) {
            const int dp = static_cast<int>(world / rest);
            refused = m_document->setFields({{path, QString::number(value)}, {QStringLiteral("parallel.dp"), QString::number(dp)}},
                                            tr("Set %1 to %2 (dp %3)").arg(axis).arg(value).arg(dp));
        } else {
            refused = m_document->setField(path, QString::number(value));
        }
    } else {
        refused = m_document->setField(path, QString::number(value));
    }
    if (!refused.isEmpty()) {
        refresh(); // the stepper goes back to the document's value
        emit editRefused(refused);
    }
}

void MeshCanvas::showSelection(int rank)
{
    if (rank < 0) {
        m_selection->setText(tr("<i>Click a rank to see its coordinates and its groups.</i>"));
        return;
    }
    m_selection->setText(m_view->describeRank(rank, true));
}

void MeshCanvas::showZoom()
{
    m_zoomLabel->setText(m_view->zoom() < 0          ? tr("fit")
                         : m_view->showsNodeTiles() ? tr("nodes")
                                                    : tr("%1 px").arg(m_view->cellSize()));
    m_zoomIn->setEnabled(m_view->zoom() < MeshView::zoomLevels() - 1);
    m_zoomOut->setEnabled(m_view->zoom() != 0);
}

} // namespace trellis::ui::plan_editor
