#include "ui/plan/plan_editor.h"

#include "launcher/document/plan_document.h"
#include "ui/plan/field_table.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStyle>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include <numeric>

namespace trellis::ui::plan_editor {
namespace {

// A JSON value from the document's text ("4", "\"gpipe\"", "null").
QJsonValue valueOf(const QString &jsonText)
{
    const QJsonDocument d = QJsonDocument::fromJson((QStringLiteral("[") + jsonText + QStringLiteral("]")).toUtf8());
    return d.isArray() && !d.array().isEmpty() ? d.array().first() : QJsonValue();
}

QString jsonString(const QString &text)
{
    const QByteArray wrapped = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

// A choice as JSON: whole numbers as numbers, the empty choice as null, words as strings.
QString choiceJson(const QString &choice)
{
    if (choice.isEmpty())
        return QStringLiteral("null");
    bool number = false;
    choice.toLongLong(&number);
    return number ? choice : jsonString(choice);
}

QString displayed(const QJsonValue &v)
{
    if (v.isString())
        return v.toString();
    if (v.isDouble())
        return QString::number(v.toDouble(), 'g', 12);
    if (v.isBool())
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return {};
}

} // namespace

PlanEditor::PlanEditor(launcher::document::PlanDocument *document, QWidget *parent) : QWidget(parent), m_document(document)
{
    build();
    connect(m_document, &launcher::document::PlanDocument::changed, this, &PlanEditor::refresh);
    refresh();
}

void PlanEditor::build()
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    layout->addWidget(m_summary);

    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    // The fields follow the column's width (a row too narrow for its label puts the label above);
    // a horizontal scroll bar would hide half of every field.
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(createSections());
    layout->addWidget(m_scroll, 1);

    auto *problemsTitle = new QLabel(tr("<b>Problems</b>"), this);
    layout->addWidget(problemsTitle);
    m_problems = new QListWidget(this);
    m_problems->setMaximumHeight(120);
    connect(m_problems, &QListWidget::itemClicked, this,
            [this](QListWidgetItem *item) { focusField(item->data(Qt::UserRole).toString()); });
    layout->addWidget(m_problems);
}

QWidget *PlanEditor::createSections()
{
    auto *content = new QWidget(m_scroll);
    auto *sections = new QVBoxLayout(content);
    sections->setContentsMargins(0, 0, 0, 0);
    QHash<int, QFormLayout *> forms;
    std::vector<Field> trainer;
    for (const Field &field : fields()) {
        if (field.section == Section::Trainer) {
            trainer.push_back(field); // at the end, folded while the plan does not use it
            continue;
        }
        QFormLayout *form = forms.value(static_cast<int>(field.section));
        if (!form) {
            auto *box = new QGroupBox(sectionTitle(field.section), content);
            form = new QFormLayout(box);
            form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
            form->setRowWrapPolicy(QFormLayout::WrapLongRows);
            sections->addWidget(box);
            forms.insert(static_cast<int>(field.section), form);
        }
        addFieldRow(field, form, content);
    }
    if (!trainer.empty()) {
        auto *box = new QGroupBox(content);
        auto *boxLayout = new QVBoxLayout(box);
        m_trainerToggle = new QToolButton(box);
        m_trainerToggle->setObjectName(QStringLiteral("ownTrainerToggle"));
        m_trainerToggle->setCheckable(true);
        m_trainerToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        m_trainerToggle->setAutoRaise(true);
        boxLayout->addWidget(m_trainerToggle);
        m_trainerNote = new QLabel(box);
        m_trainerNote->setWordWrap(true);
        boxLayout->addWidget(m_trainerNote);
        m_trainerBody = new QWidget(box);
        auto *form = new QFormLayout(m_trainerBody);
        form->setContentsMargins(0, 0, 0, 0);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        form->setRowWrapPolicy(QFormLayout::WrapLongRows);
        for (const Field &field : trainer)
            addFieldRow(field, form, content);
        boxLayout->addWidget(m_trainerBody);
        sections->addWidget(box);
        connect(m_trainerToggle, &QToolButton::toggled, this, [this](bool open) {
            m_trainerBody->setVisible(open);
            m_trainerToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        });
        m_trainerToggle->setChecked(false);
        m_trainerBody->hide();
        m_trainerToggle->setArrowType(Qt::RightArrow);
    }
    sections->addStretch(1);
    return content;
}

// The own-trainer section says whether the plan uses it, and is open when it does (a person may
// open it to start using it).
void PlanEditor::refreshTrainerSection()
{
    if (!m_trainerToggle)
        return;
    const bool used = m_document->plan().ownTrainer.external();
    // The title alone on the button (a button's text does not wrap: a long one would widen the
    // whole column), what it means below it.
    m_trainerToggle->setText(sectionTitle(Section::Trainer));
    m_trainerNote->setText(tr("Not used: trellis-trainer trains this plan."));
    m_trainerNote->setVisible(!used);
    if (used && !m_trainerToggle->isChecked())
        m_trainerToggle->setChecked(true);
}

void PlanEditor::addFieldRow(const Field &field, QFormLayout *form, QWidget *content)
{
    auto *cell = new QWidget(content);
    auto *cellLayout = new QVBoxLayout(cell);
    cellLayout->setContentsMargins(0, 0, 0, 0);
    cellLayout->setSpacing(1);
    const QString path = field.path;
    QWidget *control = createControl(field, cell);
    control->setObjectName(path);
    if (const QString tip = field.tipText(); !tip.isEmpty())
        control->setToolTip(tip);
    auto *message = new QLabel(cell);
    message->setWordWrap(true);
    message->setTextFormat(Qt::RichText);
    message->hide();
    cellLayout->addWidget(control);
    cellLayout->addWidget(message);
    if (field.kind == Kind::Nodes) {
        // The node table and its buttons take the column's whole width, under their label.
        form->addRow(new QLabel(field.labelText(), content));
        form->addRow(cell);
    } else {
        form->addRow(field.labelText(), cell);
    }
    m_controls.insert(path, control);
    m_messages.insert(path, message);
}

QWidget *PlanEditor::createControl(const Field &field, QWidget *cell)
{
    QWidget *control = nullptr;
    const QString path = field.path;
    switch (field.kind) {
    case Kind::Integer: {
        auto *spin = new QSpinBox(cell);
        spin->setRange(field.minimum, field.maximum);
        spin->setKeyboardTracking(false); // one edit when typing ends, not one per digit
        spin->setAccelerated(true);
        connect(spin, &QSpinBox::valueChanged, this, [this, path](int v) { commit(path, QString::number(v)); });
        control = spin;
        break;
    }
    case Kind::Number:
    case Kind::OptionalNumber:
    case Kind::Text:
    case Kind::JsonText: {
        auto *edit = new QLineEdit(cell);
        const Kind kind = field.kind;
        connect(edit, &QLineEdit::editingFinished, this, [this, path, edit, kind] {
            const QString text = edit->text().trimmed();
            if (kind == Kind::Text && text.isEmpty() && path.startsWith(QLatin1String("own_trainer.")))
                commit(path, QStringLiteral("null"));
            else if (kind == Kind::Text)
                commit(path, jsonString(edit->text()));
            else if (kind == Kind::OptionalNumber && text.isEmpty())
                commit(path, QStringLiteral("null"));
            else if (kind == Kind::JsonText && text.isEmpty())
                commit(path, path.startsWith(QLatin1String("own_trainer.")) ? QStringLiteral("null") : QStringLiteral("[]"));
            else
                commit(path, text.isEmpty() ? QStringLiteral("\"\"") : text);
        });
        control = edit;
        break;
    }
    case Kind::Choice: {
        auto *combo = new QComboBox(cell);
        // As narrow as the column: a long preset name is elided in the box, whole in its list.
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(8);
        combo->addItems(field.choices);
        if (path == QLatin1String("model.preset") || path == QLatin1String("cluster.preset"))
            combo->setItemText(0, tr("(custom)"));
        connect(combo, &QComboBox::activated, this, [this, path, combo](int index) {
            const QString value = combo->itemData(index).isValid() ? combo->itemData(index).toString() : combo->itemText(index);
            commit(path, index == 0 && (path == QLatin1String("model.preset") || path == QLatin1String("cluster.preset"))
                             ? QStringLiteral("null")
                             : choiceJson(value));
        });
        control = combo;
        break;
    }
    case Kind::Flag: {
        auto *check = new QCheckBox(cell);
        connect(check, &QCheckBox::toggled, this, [this, path](bool on) { commit(path, on ? QStringLiteral("true") : QStringLiteral("false")); });
        control = check;
        break;
    }
    case Kind::Nodes:
        control = createNodeTable(cell);
        break;
    }
    return control;
}

QWidget *PlanEditor::createNodeTable(QWidget *cell)
{
    auto *box = new QWidget(cell);
    auto *nodesLayout = new QVBoxLayout(box);
    nodesLayout->setContentsMargins(0, 0, 0, 0);
    m_nodes = new QTableWidget(0, 4, box);
    m_nodes->setHorizontalHeaderLabels({tr("Host"), tr("Slots"), tr("Device"), tr("GPU model")});
    m_nodes->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_nodes->verticalHeader()->setDefaultSectionSize(20);
    m_nodes->setMinimumHeight(110);
    m_nodes->setSelectionBehavior(QAbstractItemView::SelectRows);
    connect(m_nodes, &QTableWidget::itemChanged, this, [this](QTableWidgetItem *item) {
        if (m_refreshing)
            return;
        static const char *keys[] = {"host", "slots", "device", "gpu_model"};
        const QString text = item->text().trimmed();
        const QString value = item->column() == 1 ? (text.isEmpty() ? QStringLiteral("0") : text) : jsonString(text);
        commit(QStringLiteral("cluster.nodes[%1].%2").arg(item->row()).arg(QLatin1String(keys[item->column()])),
               item->column() == 3 && text.isEmpty() ? QStringLiteral("null") : value);
    });
    auto *buttons = new QHBoxLayout;
    m_addCount = new QSpinBox(box);
    m_addCount->setRange(1, 4096);
    m_addCount->setValue(1);
    auto *add = new QPushButton(tr("Add nodes"), box);
    add->setToolTip(tr("Copies of the last node, as many as the count beside: one undo step"));
    connect(add, &QPushButton::clicked, this, [this] { addNodes(m_addCount->value()); });
    auto *remove = new QPushButton(tr("Remove node"), box);
    connect(remove, &QPushButton::clicked, this, [this] {
        const int row = m_nodes->currentRow();
        if (row < 0 || !m_document->removeNode(row))
            emit editRefused(tr("Select a node to remove (the last node stays)"));
    });
    buttons->addWidget(m_addCount);
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    nodesLayout->addWidget(m_nodes);
    nodesLayout->addLayout(buttons);
    return box;
}

void PlanEditor::commit(const QString &path, const QString &jsonValue)
{
    if (m_refreshing)
        return;
    QString error;
    if (path == QLatin1String("cluster.preset") && jsonValue == QLatin1String("\"cpu-local\"")) {
        // This machine: as many slots as it has cores, whatever the preset's default says.
        const int cores = std::max(1, QThread::idealThreadCount());
        QList<QPair<QString, QString>> assignments{{path, jsonValue}};
        for (std::size_t i = 0; i < m_document->plan().cluster.nodes.size(); ++i)
            assignments.append({QStringLiteral("cluster.nodes[%1].slots").arg(i), QString::number(cores)});
        error = m_document->setFields(assignments, tr("Set the cluster to this machine (%n core(s))", nullptr, cores));
    } else {
        error = m_document->setField(path, jsonValue);
    }
    if (!error.isEmpty()) {
        refresh(); // put the control back to the document's value
        if (QLabel *message = m_messages.value(controlPathFor(path))) {
            message->setText(QStringLiteral("<span style='color:#b00020'>%1</span>").arg(error.toHtmlEscaped()));
            message->show();
        }
        emit editRefused(error);
    }
}

void PlanEditor::addNodes(int count)
{
    const int now = static_cast<int>(m_document->plan().cluster.nodes.size());
    m_document->setField(QStringLiteral("cluster.node_count"), QString::number(now + count));
}

void PlanEditor::refresh()
{
    m_refreshing = true;
    refreshTrainerSection();
    for (const Field &field : fields())
        refreshControl(field, m_controls.value(field.path));
    refreshNodes();
    refreshEnabled();
    m_refreshing = false;
    refreshSummary();
    showDiagnostics();
}

// A field's control shows the plan's value (the tensor-parallel degrees offered follow the heads).
void PlanEditor::refreshControl(const Field &field, QWidget *control)
{
    const auto &p = m_document->plan();
    const QJsonValue value = valueOf(m_document->field(field.path));
    if (auto *spin = qobject_cast<QSpinBox *>(control)) {
        if (field.path == QLatin1String("parallel.pp"))
            spin->setMaximum(std::max({1, p.model.layers, p.parallel.pp}));
        spin->setValue(value.toInt());
    } else if (auto *edit = qobject_cast<QLineEdit *>(control)) {
        if (!edit->hasFocus() || edit->text() != displayed(value))
            edit->setText(displayed(value));
    } else if (auto *check = qobject_cast<QCheckBox *>(control)) {
        check->setChecked(value.toBool());
    } else if (auto *combo = qobject_cast<QComboBox *>(control)) {
        if (field.path == QLatin1String("parallel.tp")) {
            // Only the tensor-parallel degrees the heads allow (and the current one, valid or not).
            std::vector<int> offered = divisorsOf(std::gcd(std::max(1, p.model.heads), std::max(1, p.model.kvHeads)));
            if (std::find(offered.begin(), offered.end(), p.parallel.tp) == offered.end())
                offered.push_back(p.parallel.tp);
            std::sort(offered.begin(), offered.end());
            combo->clear();
            for (int d : offered)
                combo->addItem(QString::number(d));
        }
        QString text = displayed(value);
        int index = combo->findText(text);
        if (index < 0 && (field.path == QLatin1String("model.preset") || field.path == QLatin1String("cluster.preset")))
            index = 0; // custom
        if (index < 0) {
            combo->addItem(text);
            index = combo->count() - 1;
        }
        combo->setCurrentIndex(index);
    }
}

// Loss scaling is fp16's; reducing gradients in bf16 needs mixed precision; inner steps are local
// updates', the outer optimizer DiLoCo's. A plan running its own trainer without a model shows no
// model fields to edit (their controls would show made-up values): choosing a model preset gives
// it one.
void PlanEditor::refreshEnabled()
{
    const auto &p = m_document->plan();
    const bool noModel = p.ownTrainer.external() && !p.ownTrainer.hasModel;
    for (const Field &field : fields()) {
        QWidget *control = m_controls.value(field.path);
        if (!control)
            continue;
        if (field.path.startsWith(QLatin1String("parallel.loss_scale.")))
            control->setEnabled(p.parallel.precision == plan::Precision::Fp16);
        else if (field.path == QLatin1String("parallel.dp_sync.inner_steps")) // local updates' fields
            control->setEnabled(p.parallel.dpSync.local());
        else if (field.path.startsWith(QLatin1String("parallel.dp_sync.")) && field.path != QLatin1String("parallel.dp_sync.mode"))
            control->setEnabled(p.parallel.dpSync.mode == plan::DpSyncMode::DiLoCo);
        else if (field.path.startsWith(QLatin1String("model.")) && field.path != QLatin1String("model.preset"))
            control->setEnabled(!noModel);
    }
    if (QWidget *control = m_controls.value(QStringLiteral("parallel.grad_reduce")))
        control->setEnabled(p.parallel.precision != plan::Precision::Fp32 || p.parallel.gradReduce != plan::GradReduce::Fp32);
}

// The line above the fields: the plan's name, ranks and layout against the slots. One arg() call
// each, so that a plan named with "%2" in it is shown as it is.
void PlanEditor::refreshSummary()
{
    const auto &p = m_document->plan();
    const auto &q = p.parallel;
    const int slotCount = p.cluster.totalSlots();
    const QString colour = q.worldSize() == slotCount ? QStringLiteral("#1b7a1b") : QStringLiteral("#b00020");
    const QString name = m_document->displayName().toHtmlEscaped();
    const QString n = QString::number(p.cluster.nodes.size());
    if (p.ownTrainer.external()) {
        QStringList words;
        for (const std::string &w : p.ownTrainer.command)
            words << QString::fromStdString(w);
        m_summary->setText(tr("<b>%1</b> — runs its own trainer on %2 ranks (<span style='color:%3'>%4 slots</span> of %5 node(s)): "
                              "<code>%6</code>%7")
                               .arg(name, QString::number(q.worldSize()), colour, QString::number(slotCount), n,
                                    words.join(QLatin1Char(' ')).toHtmlEscaped(),
                                    p.ownTrainer.hasModel ? QString() : tr(" · no model section: no estimate")));
        return;
    }
    m_summary->setText(tr("<b>%1</b> — %2 ranks (dp %3 · tp %4 · pp %5 · cp %6) on <span style='color:%7'>%8 slots</span> of %9 "
                          "node(s) · global batch %10 sequences × %11 tokens")
                           .arg(name, QString::number(q.worldSize()), QString::number(q.dp), QString::number(q.tp),
                                QString::number(q.pp), QString::number(q.cp), colour, QString::number(slotCount), n,
                                QString::number(q.globalBatch()), QString::number(p.model.seqLen)) +
                       (q.ep > 1 ? tr(" · experts over ep %1 (inside dp)").arg(q.ep) : QString()));
}

void PlanEditor::refreshNodes()
{
    const auto &nodes = m_document->plan().cluster.nodes;
    std::vector<std::string> now;
    now.reserve(nodes.size());
    for (const auto &n : nodes)
        now.push_back(n.host + '\t' + std::to_string(n.slotCount) + '\t' + (n.device == plan::DeviceKind::Cuda ? "cuda" : "cpu") +
                      '\t' + n.gpuModel);
    if (now == m_shownNodes)
        return;
    m_shownNodes = now;
    const bool was = m_nodes->blockSignals(true);
    m_nodes->setRowCount(static_cast<int>(nodes.size()));
    for (int r = 0; r < static_cast<int>(nodes.size()); ++r) {
        const auto &n = nodes[static_cast<std::size_t>(r)];
        const QString cells[] = {QString::fromStdString(n.host), QString::number(n.slotCount),
                                 QLatin1String(n.device == plan::DeviceKind::Cuda ? "cuda" : "cpu"), QString::fromStdString(n.gpuModel)};
        for (int c = 0; c < 4; ++c) {
            if (auto *item = m_nodes->item(r, c))
                item->setText(cells[c]);
            else
                m_nodes->setItem(r, c, new QTableWidgetItem(cells[c]));
        }
    }
    m_nodes->blockSignals(was);
}

void PlanEditor::showDiagnostics()
{
    for (QLabel *message : std::as_const(m_messages)) {
        message->clear();
        message->hide();
    }
    m_problems->clear();
    for (const auto &d : m_document->diagnostics()) {
        const QString path = QString::fromStdString(d.path);
        const bool error = d.severity == plan::Severity::Error;
        const QString text = QString::fromStdString(d.message);
        const QString colour = error ? QStringLiteral("#b00020") : QStringLiteral("#a36a00");
        if (QLabel *message = m_messages.value(controlPathFor(path))) {
            const int node = nodeIndexOf(path);
            const QString line = (node >= 0 ? tr("node %1: ").arg(node) : QString()) + text;
            message->setText(message->text() + (message->text().isEmpty() ? QString() : QStringLiteral("<br>")) +
                             QStringLiteral("<span style='color:%1'>%2</span>").arg(colour, line.toHtmlEscaped()));
            message->show();
        }
        auto *item = new QListWidgetItem(style()->standardIcon(error ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning),
                                         path.isEmpty() ? text : path + QStringLiteral(": ") + text, m_problems);
        item->setData(Qt::UserRole, path);
    }
    if (m_problems->count() == 0)
        m_problems->addItem(tr("No problems: the plan is valid."));
}

void PlanEditor::focusField(const QString &diagnosticPath)
{
    QWidget *control = m_controls.value(controlPathFor(diagnosticPath));
    if (!control)
        return;
    if (m_trainerBody && m_trainerBody->isAncestorOf(control))
        m_trainerToggle->setChecked(true);
    m_scroll->ensureWidgetVisible(control);
    if (const int node = nodeIndexOf(diagnosticPath); node >= 0 && node < m_nodes->rowCount()) {
        m_nodes->selectRow(node);
        m_nodes->setFocus();
        return;
    }
    control->setFocus(Qt::OtherFocusReason);
}

} // namespace trellis::ui::plan_editor
