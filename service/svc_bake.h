/*
 * svc_bake: the `navd bake` subcommand (offline baking, no server).
 */
#ifndef SVC_BAKE_H
#define SVC_BAKE_H

/* argv[0] is "bake"; returns the process exit code. */
int svc_bake_main(int argc, char **argv);

#endif
