# Layering check (docs/architecture.md §2): fails when a folder includes what its row forbids.
# Run as: cmake -DSOURCE_DIR=<repo root> -P check_layering.cmake
# Each rule is: folder | regex of forbidden #include targets | why.
set(rules
  "backend/plan|^<Q|^<qcustomplot|protocol/|trainer/|launcher/|ui/|^<zmq|^<mpi|^<sqlite|Qt module, protocol, trainer, launcher, ui, zmq, MPI or SQL"
  "backend/protocol|^<Q|^<qcustomplot|plan/|trainer/|launcher/|ui/|^<mpi|^<sqlite|Qt module, plan, trainer, launcher, ui, MPI or SQL"
  "backend/trainer|^<Q|^<qcustomplot|launcher/|ui/|^<sqlite|Qt module, launcher, ui or SQL"
  "kernels|^<Q|^<qcustomplot|plan/|protocol/|trainer/|launcher/|ui/|^<zmq|^<mpi|Qt module, plan, protocol, trainer, launcher, ui, zmq or MPI"
  "launcher|^<QtWidgets|^<QWidget|^<QApplication|^<QMainWindow|^<QDialog|^<QMessageBox|^<qcustomplot|ui/|trainer/|kernels/|^<mpi|Qt Widgets, QCustomPlot, ui, trainer, kernels or MPI"
  "ui|^<zmq|^<QSql|^<QtSql|^<sqlite|trainer/|kernels/|protocol/|^<mpi|launcher/cli/|zmq, SQL, trainer, kernels, protocol, MPI or the CLI's commands"
  # Inside the launcher: the leaves know no other launcher folder (run_types.h is shared by all);
  # what stores and shows runs never reaches up to what owns and launches them.
  "launcher/document|launcher/cli/|launcher/run/|launcher/targets/|launcher/ingest/|launcher/detectors/|launcher/supervisor/|launcher/metrics/|launcher/history/|launcher/report/|another launcher folder (the document is a leaf)"
  "launcher/detectors|launcher/cli/|launcher/run/|launcher/targets/|launcher/ingest/|launcher/supervisor/|launcher/metrics/|launcher/history/|launcher/report/|launcher/document/|another launcher folder (detectors are fed rows, they fetch nothing)"
  "launcher/ingest|launcher/cli/|launcher/run/|launcher/targets/|launcher/detectors/|launcher/supervisor/|launcher/metrics/|launcher/history/|launcher/report/|launcher/document/|another launcher folder (the receiver knows the protocol and its rows only)"
  "launcher/history|launcher/cli/|launcher/run/|launcher/targets/|launcher/ingest/|launcher/detectors/|the CLI, the run's owner, targets, ingest or detectors"
  "launcher/metrics|launcher/cli/|launcher/run/|launcher/targets/|launcher/ingest/|launcher/detectors/|launcher/supervisor/|launcher/history/|the CLI, the run's owner, targets, ingest, detectors, the supervisor or the history"
  "launcher/report|launcher/cli/|launcher/run/|launcher/targets/|launcher/ingest/|launcher/detectors/|launcher/supervisor/|launcher/history/|the CLI, the run's owner, targets, ingest, detectors, the supervisor or the history"
)
set(violations "")
foreach(rule IN LISTS rules)
  string(REPLACE "|" ";" parts "${rule}")
  list(GET parts 0 folder)
  list(LENGTH parts n)
  math(EXPR last "${n} - 1")
  list(GET parts ${last} why)
  math(EXPR lastPattern "${n} - 2")
  file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.cpp"
       "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*" "" target "${line}")
      string(REGEX REPLACE "[ \t]+//.*$" "" target "${target}")
      string(STRIP "${target}" target)
      string(REGEX REPLACE "^\"" "" quoted "${target}")
      foreach(i RANGE 1 ${lastPattern})
        list(GET parts ${i} pattern)
        string(SUBSTRING "${pattern}" 0 1 first)
        if(first STREQUAL "^")
          set(hit FALSE)
          if(target MATCHES "${pattern}")
            set(hit TRUE)
          endif()
        else()
          set(hit FALSE)
          if(quoted MATCHES "^${pattern}")
            set(hit TRUE)
          endif()
        endif()
        if(hit)
          file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
          string(APPEND violations "  ${rel}: #include ${target} — ${folder}/ must never use ${why}\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "Layering violations (docs/architecture.md §2):\n${violations}")
endif()
message(STATUS "Layering check: no violations")
