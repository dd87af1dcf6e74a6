/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Sub-commands of the steptime CLI; each returns the process exit status. */
#ifndef _STEPTIME_TOOLS_CMDS_H
#define _STEPTIME_TOOLS_CMDS_H

int cmd_load(int argc, char **argv);	/* tools/load.c */
int cmd_unload(int argc, char **argv);	/* tools/load.c */
int cmd_status(int argc, char **argv);	/* tools/load.c */
int cmd_stat(int argc, char **argv);	/* tools/stat.c */
int cmd_record(int argc, char **argv);	/* tools/stat.c */
int cmd_trace(int argc, char **argv);	/* tools/trace.c */
int cmd_export(int argc, char **argv);	/* tools/export.c */
int cmd_top(int argc, char **argv);	/* tools/top.c */
int cmd_doctor(int argc, char **argv);	/* tools/doctor.c */

#endif /* _STEPTIME_TOOLS_CMDS_H */
