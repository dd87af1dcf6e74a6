# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Source this file (as CANN's set_env.sh / setenv.bash): it points
# ASCEND_HOME_PATH and the loader at the tree it was installed in, which
# `make install-ascend ASCEND_HOME_PATH=DIR` laid out (steptime's ACL
# runtime on npusim: include/acl, lib64/libascendcl.so, ...).
_steptime_ascend_home=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
export ASCEND_HOME_PATH="$_steptime_ascend_home"
export ASCEND_TOOLKIT_HOME="$_steptime_ascend_home"
case ":${LD_LIBRARY_PATH:-}:" in
*":$_steptime_ascend_home/lib64:"*) ;;
*) export LD_LIBRARY_PATH="$_steptime_ascend_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
unset _steptime_ascend_home
