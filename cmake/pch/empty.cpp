// The translation unit of a precompiled-header host target (cmake/TrellisPch.cmake): the suites
// reuse the header it precompiles with their flags.
