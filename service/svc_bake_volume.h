/*
 * svc_bake_volume: `navd bake-volume LEVEL.obj [options]`, the offline
 * flight-volume bake (no server): reads a Wavefront OBJ level, bakes it
 * with progress on stderr, and writes the volume to a file and/or stores
 * it in a navd database under a name (as POST /v1/volumes/{name}/bake
 * would). Run `navd bake-volume --help` for the options.
 */
#ifndef SVC_BAKE_VOLUME_H
#define SVC_BAKE_VOLUME_H

/* argv[0] is "bake-volume". Returns the process exit code: 0 done, 1 failed, 2 bad usage. */
int svc_bake_volume_main(int argc, char **argv);

#endif
