// Precompiled header of the Qt Widgets targets (trellis_ui and the suites that link it;
// cmake/TrellisPch.cmake): the Core one and the widgets and plots every panel uses.
#pragma once

#include "cmake/pch/qt_core.h"

#include <QtWidgets>
#include <qcustomplot.h>
