/*
 * api_json: the JSON conventions of the service, in one place.
 *
 * Parsing rejects duplicate keys and reports jansson's line and column;
 * a number too large for jansson (1e999, or an integer beyond 64 bits) is
 * valid JSON, so it is read as a value beyond float range (or the same
 * value as a real) and the field that holds it is named by its reader.
 * Every number read here must be finite as a float32 (|x| <= FLT_MAX).
 * output is compact, key order preserved and reals printed with 9
 * significant digits, so a float32 coordinate round-trips and the same
 * answer always serializes to the same bytes. The field readers name the
 * offending field in their error ("queries[3].start[1] is not a finite
 * number"); `where` is the field's full path as the client wrote it.
 */
#ifndef API_JSON_H
#define API_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/api_error.h"

/*
 * Parses a request body; NULL with e = invalid_json (line/column) on failure.
 * A number beyond +-DBL_MAX reads as +-1e39 (a float reader then names its
 * field); an integer beyond json_int_t reads as a real of the same value.
 */
json_t *api_json_parse(const char *body, size_t len, api_err *e);

/* Serializes compactly (9 significant digits); malloc'd, NUL-terminated. */
char *api_json_dump(const json_t *j, size_t *len);

/* json_real of a float/double (jansson cannot print non-finite reals: they become null). */
json_t *api_json_num(double v);
/* [x, y, z] */
json_t *api_json_vec3(const float v[3]);

/*
 * A direct JSON writer for hot responses (path answers): no tree, one
 * growing buffer. Numbers print exactly as api_json_dump prints them (9
 * significant digits, ".0" on integral reals, exponent without '+' or
 * leading zeros), so both encoders give the same bytes. On allocation
 * failure it stops growing and api_jw_finish returns NULL.
 */
typedef struct api_jw {
    char *p;
    size_t len, cap;
    int failed;
} api_jw;

void api_jw_init(api_jw *w, size_t cap);
/* Appends n raw bytes (already JSON: punctuation, keys). */
void api_jw_raw(api_jw *w, const char *s, size_t n);
/* Appends a string literal's bytes: api_jw_lit(w, "{\"a\":"). */
#define api_jw_lit(w, s) api_jw_raw((w), (s), sizeof(s) - 1)
/* Appends a quoted, escaped string. */
void api_jw_str(api_jw *w, const char *s);
/* Appends a number (null when not finite, as api_json_num). */
void api_jw_num(api_jw *w, double v);
void api_jw_uint(api_jw *w, uint64_t v);
void api_jw_vec3(api_jw *w, const float v[3]);

/*
 * Writing in place, for encoders that emit many small pieces (a step's
 * slots): api_jw_room reserves n bytes and returns where they start (NULL
 * after a failure); the caller writes at most n bytes there with the *_to
 * functions below (each returns the bytes written) and api_jw_put, then
 * adds what it wrote to w->len. The same bytes as the appending calls.
 */
#define API_JW_NUM_MAX 32                        /* api_jw_num_to writes at most this */
#define API_JW_VEC3_MAX (3 * API_JW_NUM_MAX + 4) /* api_jw_vec3_to */
#define API_JW_STR_MAX(n) (6 * (size_t)(n) + 2)  /* api_jw_str_to of n bytes */
char *api_jw_room(api_jw *w, size_t n);
size_t api_jw_num_to(char *out, double v);
size_t api_jw_vec3_to(char *out, const float v[3]);
size_t api_jw_str_to(char *out, const char *s, size_t n);
/* Copies a string literal to o and yields the end: o = api_jw_put(o, "],"). */
#define api_jw_put(o, lit) ((char *)memcpy((o), (lit), sizeof(lit) - 1) + sizeof(lit) - 1)
/* The malloc'd text (NUL-terminated) and its length, or NULL after a failure. */
char *api_jw_finish(api_jw *w, size_t *len);

/* Joins a field path: "queries[3]" + ".start" etc. into buf; returns buf. */
const char *api_path(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Field readers. Each returns API_OK, or fills e with `code` and a sentence
 * naming `where` and returns that code. A missing optional field leaves *out
 * untouched (the caller's default) and returns API_OK.
 */
/* A finite number representable as float. */
api_code api_json_float(const json_t *v, const char *where, float *out, api_code code, api_err *e);
/* [x, y, z] of finite numbers. */
api_code api_json_get_vec3(const json_t *v, const char *where, float out[3], api_code code,
                           api_err *e);
/* An integer in [lo, hi]. */
api_code api_json_int_range(const json_t *v, const char *where, int64_t lo, int64_t hi,
                            int64_t *out, api_code code, api_err *e);

/* Object member lookups with `required` semantics; `obj_where` names the object ("" for root). */
api_code api_obj_vec3(const json_t *obj, const char *obj_where, const char *key, bool required,
                      float out[3], api_err *e);
/* A number finite as a float (|x| <= FLT_MAX), then in [lo, hi]. */
api_code api_obj_number(const json_t *obj, const char *obj_where, const char *key, bool required,
                        double lo, double hi, double *out, api_err *e);
api_code api_obj_bool(const json_t *obj, const char *obj_where, const char *key, bool *out,
                      api_err *e);
api_code api_obj_uint(const json_t *obj, const char *obj_where, const char *key, uint64_t lo,
                      uint64_t hi, uint64_t *out, api_err *e);

#endif
