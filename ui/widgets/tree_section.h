// A bold, expanded top-level row spanning every column: how the plan summary and the plan
// comparison head their sections.
#pragma once

#include <QTreeWidget>

namespace trellis::ui {

inline QTreeWidgetItem *addTreeSection(QTreeWidget *tree, const QString &title)
{
    auto *item = new QTreeWidgetItem(tree, {title});
    item->setFirstColumnSpanned(true);
    item->setExpanded(true);
    QFont font = item->font(0);
    font.setBold(true);
    item->setFont(0, font);
    return item;
}

} // namespace trellis::ui
