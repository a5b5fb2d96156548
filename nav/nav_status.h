/*
 * nav_status: the status word of every nav/ entry point.
 *
 * The list is an X-macro so the enum and its names can never drift; api/
 * keeps the one table that maps each status to an HTTP status and the
 * contract's error code. A partial path is a success (NAV_OK) with a flag in
 * the result, as in Detour: only failures are statuses here.
 */
#ifndef NAV_STATUS_H
#define NAV_STATUS_H

#define NAV_STATUS_LIST(X)                                                                         \
    X(NAV_OK, "ok")                                                                                \
    X(NAV_E_INVALID_ARG, "invalid argument")                                                       \
    X(NAV_E_NOMEM, "out of memory")                                                                \
    X(NAV_E_INVALID_MESH, "invalid navmesh")                                                       \
    X(NAV_E_OFF_MESH, "point is not on the navmesh")                                               \
    X(NAV_E_CORRUPT, "corrupt serialized navmesh")                                                 \
    X(NAV_E_LIMIT, "a configured limit was exceeded")                                              \
    X(NAV_E_NOT_FOUND, "not found")                                                                \
    X(NAV_E_DEADLINE, "the caller's deadline was reached")                                         \
    X(NAV_E_CANCELLED, "cancelled")                                                                \
    X(NAV_E_EMPTY, "nothing walkable")

typedef enum nav_status {
#define NAV_STATUS_ENUM(name, text) name,
    NAV_STATUS_LIST(NAV_STATUS_ENUM)
#undef NAV_STATUS_ENUM
        NAV_STATUS_COUNT
} nav_status;

/* Static, human readable name of a status ("invalid navmesh"). Never NULL. */
const char *nav_status_text(nav_status s);

/*
 * Detail of a failure for the user: which polygon, vertex or field was wrong.
 * Filled by functions that take a nav_error *; may be NULL when the caller
 * does not want the text.
 */
typedef struct nav_error {
    nav_status status;
    char message[256];
} nav_error;

#endif
