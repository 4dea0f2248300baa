/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the dpusim tool's subcommands, one file each:
 * stat.c (stat, top), trace.c (trace).  Each takes the arguments after
 * its name and returns the exit status (0 ok, 1 error, 2 usage).
 */
#ifndef DPUSIM_TOOL_COMMANDS_H
#define DPUSIM_TOOL_COMMANDS_H

int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif /* DPUSIM_TOOL_COMMANDS_H */
