// The mesh view's drawing constants and colours, shared by its layout (mesh_view.cpp) and its
// painting (mesh_view_paint.cpp).
#pragma once

#include <QColor>

namespace trellis::ui::mesh_style {

inline constexpr int kMargin = 6, kLegend = 22, kTitle = 16, kPad = 4, kGap = 8, kTileGap = 3;

// Membership of a rank in the selected rank's groups (the index into kGroupColours) or none.
enum Membership { None = -1, InTp = 0, InCp, InDp, InPp, InEp, Selected };
inline const QColor kGroupColours[] = {QColor(0x1f, 0x6f, 0xd0), QColor(0x0e, 0x9e, 0x8e), QColor(0xd0, 0x7a, 0x10),
                                       QColor(0x8a, 0x3f, 0xc0), QColor(0xc0, 0x30, 0x7a)};

// Evenly spaced hues, light enough for dark text.
inline QColor hueColor(int value, int count)
{
    const int hue = count <= 1 ? 210 : (210 + value * 300 / count) % 360;
    return QColor::fromHsl(hue, 120, 200);
}

inline QColor dimmed(const QColor &c, const QColor &base)
{
    return QColor((c.red() + 3 * base.red()) / 4, (c.green() + 3 * base.green()) / 4, (c.blue() + 3 * base.blue()) / 4);
}

} // namespace trellis::ui::mesh_style
