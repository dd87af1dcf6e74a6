# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Source this file (as CANN's set_env.sh / setenv.bash): it points
# ASCEND_HOME_PATH and the loader at the tree it was installed in, which
# `make install-ascend ASCEND_HOME_PATH=DIR` laid out (steptime's ACL
# runtime on npusim: include/acl, lib64/libascendcl.so, ...,
# driver/lib64/driver/libascend_hal.so).
_steptime_ascend_home=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
export ASCEND_HOME_PATH="$_steptime_ascend_home"
export ASCEND_TOOLKIT_HOME="$_steptime_ascend_home"
# lib64 (the runtime) and the driver's library, as CANN's set_env.sh adds
# driver/lib64/driver.
for _steptime_d in driver/lib64/driver lib64; do
	case ":${LD_LIBRARY_PATH:-}:" in
	*":$_steptime_ascend_home/$_steptime_d:"*) ;;
	*) export LD_LIBRARY_PATH="$_steptime_ascend_home/$_steptime_d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
	esac
done
unset _steptime_d
unset _steptime_ascend_home
