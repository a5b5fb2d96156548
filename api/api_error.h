/*
 * api_error: the one table that maps every outcome of a request to an HTTP
 * status and the contract's error code.
 *
 * api_code is generated from an X-macro list, so the enum, the HTTP status
 * and the snake_case code never drift. nav_status and store_status map onto
 * it here too; handlers pass codes, never HTTP numbers.
 */
#ifndef API_ERROR_H
#define API_ERROR_H

#include <stdarg.h>

#include "nav/nav_status.h"
#include "storage/store.h"

/* X(enum, http status, contract code) */
#define API_CODE_LIST(X)                                                                           \
    X(API_OK, 200, "ok")                                                                           \
    X(API_CREATED, 201, "created")                                                                 \
    X(API_ACCEPTED, 202, "accepted")                                                               \
    X(API_NO_CONTENT, 204, "no_content")                                                           \
    X(API_E_BAD_REQUEST, 400, "bad_request")                                                       \
    X(API_E_INVALID_JSON, 400, "invalid_json")                                                     \
    X(API_E_UNAUTHORIZED, 401, "unauthorized")                                                     \
    X(API_E_FORBIDDEN, 403, "forbidden")                                                           \
    X(API_E_NOT_FOUND, 404, "not_found")                                                           \
    X(API_E_METHOD_NOT_ALLOWED, 405, "method_not_allowed")                                         \
    X(API_E_PAYLOAD_TOO_LARGE, 413, "payload_too_large")                                           \
    X(API_E_UNSUPPORTED_MEDIA_TYPE, 415, "unsupported_media_type")                                 \
    X(API_E_INVALID_NAVMESH, 422, "invalid_navmesh")                                               \
    X(API_E_POINT_OFF_MESH, 422, "point_off_mesh")                                                 \
    X(API_E_INVALID_LEVEL, 422, "invalid_level")                                                   \
    X(API_E_POINT_BLOCKED, 422, "point_blocked")                                                   \
    X(API_E_INTERNAL, 500, "internal")                                                             \
    X(API_E_UNAVAILABLE, 503, "unavailable")

typedef enum api_code {
#define API_CODE_ENUM(name, http, code) name,
    API_CODE_LIST(API_CODE_ENUM)
#undef API_CODE_ENUM
        API_CODE_COUNT
} api_code;

/* HTTP status of a code (200 for out-of-range values is never returned: 500). */
unsigned api_code_http(api_code c);
/* Contract code string ("invalid_json"); static, never NULL. */
const char *api_code_name(api_code c);
/* True for the error codes (4xx/5xx). */
int api_code_is_error(api_code c);

/* The contract's error code for a failed nav/ call. */
api_code api_code_from_nav(nav_status s);
/* The contract's error code for a failed store call. */
api_code api_code_from_store(store_status s);

/*
 * An error on its way to the client: a code and one readable sentence that
 * names the offending field. Never a file path or an internal detail.
 */
typedef struct api_err {
    api_code code;
    char message[320];
} api_err;

/* Sets *e (printf format); returns the code so callers can `return api_fail(...)`. */
api_code api_fail(api_err *e, api_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
