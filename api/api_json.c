/*
 * api_json: parsing, printing and field validation of JSON (see api_json.h).
 */
#include "api/api_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The characters a JSON number token is made of (the grammar is checked by jansson). */
static bool number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/*
 * Rewrites, in place and at the same length, one number token jansson
 * cannot hold: one beyond +-DBL_MAX becomes +-1e39, finite as a double but
 * not as a float (every number navd reads is converted to float, or checked
 * like one), so the field's own check names it; an integer beyond
 * json_int_t becomes the same value as a real (13+ significant digits, so
 * a coordinate keeps its float value and an index field still refuses it).
 * Other tokens are left alone. t[n] is writable (a NUL or the next byte).
 */
static void fix_number(char *t, size_t n) {
    char saved = t[n], *end;
    t[n] = '\0'; /* strtod must not read past the token ("1e999,") */
    bool integer = strpbrk(t, ".eE") == NULL;
    errno = 0;
    bool fits = integer && (strtoll(t, &end, 10), errno != ERANGE);
    double d = strtod(t, &end);
    t[n] = saved;
    if (fits || end != t + n)
        return; /* jansson holds it, or it is not a number: jansson reports it */
    char buf[32];
    int w;
    if (isinf(d)) {
        w = snprintf(buf, sizeof buf, "%s", d < 0 ? "-1e39" : "1e39");
    } else if (integer) {
        /* at least 19 digits ("9223372036854775808"): 13 significant ones fit */
        int p = 16;
        do
            w = snprintf(buf, sizeof buf, "%.*e", p, d);
        while (w > (int)n && --p > 0);
    } else {
        return; /* an underflow: jansson accepts those (as 0 or a subnormal) */
    }
    if (w <= 0 || (size_t)w > n)
        return;
    memcpy(t, buf, (size_t)w);
    memset(t + w, ' ', n - (size_t)w); /* whitespace after a number is still JSON */
}

/*
 * The second parse after jansson refused a number it cannot hold. JSON's
 * grammar has no limit on a number, and the contract wants such a field
 * named ("end[2] is not a finite number"), not the whole body called
 * invalid; so the body is copied, its overflowing number tokens outside
 * strings rewritten (fix_number) at the same length, so any later error
 * keeps its line and column, and parsed again. Only requests that hold
 * such a number pay for the copy.
 */
static json_t *parse_again(const char *body, size_t len, json_error_t *je) {
    char *s = malloc(len + 1);
    if (!s)
        return NULL; /* *je still holds the first error */
    memcpy(s, body, len);
    s[len] = '\0';
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\')
                i++; /* the escaped character cannot end the string */
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i;
            while (j < len && number_char(s[j]))
                j++;
            fix_number(s + i, j - i);
            i = j - 1;
        }
    }
    json_error_t again;
    json_t *j = json_loadb(s, len, JSON_REJECT_DUPLICATES, &again);
    free(s);
    if (!j)
        *je = again;
    return j;
}

json_t *api_json_parse(const char *body, size_t len, api_err *e) {
    json_error_t je;
    if (len == 0) {
        api_fail(e, API_E_INVALID_JSON, "the request body is empty; a JSON document is required");
        return NULL;
    }
    /* JSON_ALLOW_NUL is off: an embedded NUL is an error, as any other byte error. */
    json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!j && json_error_code(&je) == json_error_numeric_overflow)
        j = parse_again(body, len, &je);
    if (!j) {
        /* jansson's text is about the document only (never a path: we load from memory). */
        api_fail(e, API_E_INVALID_JSON, "invalid JSON at line %d, column %d: %s", je.line,
                 je.column, je.text);
    }
    return j;
}

char *api_json_dump(const json_t *j, size_t *len) {
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9) |
                                JSON_ENCODE_ANY);
    if (len)
        *len = s ? strlen(s) : 0;
    return s;
}

json_t *api_json_num(double v) {
    if (!isfinite(v))
        return json_null();
    /* Integral values print as reals too ("2.0") so a field's JSON type never
       changes; + 0.0 turns -0 into 0 (a normal's y is 0, not -0). */
    return json_real(v + 0.0);
}

json_t *api_json_vec3(const float v[3]) {
    return json_pack("[ooo]", api_json_num(v[0]), api_json_num(v[1]), api_json_num(v[2]));
}

void api_jw_init(api_jw *w, size_t cap) {
    w->len = 0;
    w->failed = 0;
    w->cap = cap ? cap : 256;
    w->p = malloc(w->cap);
    if (!w->p)
        w->failed = 1;
}

static int jw_reserve(api_jw *w, size_t n) {
    if (w->failed)
        return 0;
    if (w->len + n + 1 <= w->cap)
        return 1;
    size_t cap = w->cap * 2;
    while (cap < w->len + n + 1)
        cap *= 2;
    char *p = realloc(w->p, cap);
    if (!p) {
        w->failed = 1;
        return 0;
    }
    w->p = p;
    w->cap = cap;
    return 1;
}

void api_jw_raw(api_jw *w, const char *s, size_t n) {
    if (!jw_reserve(w, n))
        return;
    memcpy(w->p + w->len, s, n);
    w->len += n;
}

size_t api_jw_str_to(char *out, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    char *o = out;
    *o++ = '"';
    for (const unsigned char *c = (const unsigned char *)s, *end = c + n; c < end; c++) {
        if (*c == '"' || *c == '\\') {
            *o++ = '\\';
            *o++ = (char)*c;
        } else if (*c < 0x20 || *c == 0x7f) {
            *o++ = '\\';
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[*c >> 4];
            *o++ = hex[*c & 15];
        } else {
            *o++ = (char)*c;
        }
    }
    *o++ = '"';
    return (size_t)(o - out);
}

void api_jw_str(api_jw *w, const char *s) {
    size_t n = strlen(s);
    char *o = api_jw_room(w, API_JW_STR_MAX(n));
    if (!o)
        return;
    w->len += api_jw_str_to(o, s, n);
}

/*
 * %.9g for 1e-4 <= |v| < 1e9 (every coordinate and length in practice)
 * without printf: glibc prints a real through arbitrary-precision
 * arithmetic, which was the largest CPU cost of a cached path answer. The
 * value is exactly m * 2^e (m < 2^53, read from the bits); the 9
 * significant digits are round-half-even(m * 10^p * 2^e) with
 * p = 8 - floor(log10|v|), computed exactly in 128-bit integers
 * (m * 10^p < 2^53 * 10^12 < 2^93). floor(log10|v|) is first estimated
 * from the binary exponent (log10(2) ~ 78913 / 2^18, low by at most one)
 * and the digit count corrects it, so no libm call runs. Other magnitudes
 * fall back to snprintf. tests/check_api_codec.c compares both on 400,000
 * values and on every neighbour of the decade boundaries.
 */
static int fast_g9(double v, char *out) {
    static const uint64_t pow10[] = {
        1ull,           10ull,           100ull,           1000ull,          10000ull,
        100000ull,      1000000ull,      10000000ull,      100000000ull,     1000000000ull,
        10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull};
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 1e9))
        return -1;
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int bexp = (int)(bits >> 52) - 1022; /* a = frac * 2^bexp, frac in [0.5, 1): normal */
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    int e = bexp - 53;
    /* a >= 2^(bexp-1): floor((bexp-1) * log10 2) <= log10 a, low by at most
       one (the shift floors negative products too) */
    int k = ((bexp - 1) * 78913) >> 18;
    uint64_t q = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        int p = 8 - k;
        if (p < 0 || p > 13)
            return -1;
        unsigned __int128 n = (unsigned __int128)m * pow10[p];
        if (e >= 0) {
            q = (uint64_t)(n << e);
        } else {
            int sh = -e;
            if (sh >= 127)
                return -1;
            unsigned __int128 qq = n >> sh, rem = n - (qq << sh),
                              half = (unsigned __int128)1 << (sh - 1);
            if (rem > half || (rem == half && (qq & 1)))
                qq++;
            q = (uint64_t)qq;
        }
        if (q >= 1000000000ull) {
            if (q == 1000000000ull && e < 0) { /* rounded up to the next decade */
                q = 100000000ull;
                k++;
                break;
            }
            k++;
        } else if (q < 100000000ull) {
            k--;
        } else {
            break;
        }
    }
    /* below 1e9 but rounding to 1e9 (999999999.5 and up): %.9g writes
       1e+09 there, so printf's spelling is the one to give */
    if (q < 100000000ull || q >= 1000000000ull || k > 8)
        return -1;
    /* the nine digits, two at a time from a table (q < 1e9 fits 32 bits) */
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    uint32_t q32 = (uint32_t)q, lo = q32 % 100000000u;
    uint32_t hi4 = lo / 10000u, lo4 = lo % 10000u;
    char digits[10];
    digits[0] = (char)('0' + q32 / 100000000u);
    memcpy(digits + 1, pairs + 2 * (hi4 / 100u), 2);
    memcpy(digits + 3, pairs + 2 * (hi4 % 100u), 2);
    memcpy(digits + 5, pairs + 2 * (lo4 / 100u), 2);
    memcpy(digits + 7, pairs + 2 * (lo4 % 100u), 2);
    int nd = 9;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--; /* %g drops trailing zeros */
    char *o = out;
    if (v < 0)
        *o++ = '-';
    if (k >= 0) {
        /* k + 1 digits before the point (k <= 8) */
        if (nd > k + 1) {
            memcpy(o, digits, (size_t)k + 1);
            o += k + 1;
            *o++ = '.';
            memcpy(o, digits + k + 1, (size_t)(nd - k - 1));
            o += nd - k - 1;
        } else {
            memcpy(o, digits, (size_t)nd);
            o += nd;
            for (int i = nd; i <= k; i++)
                *o++ = '0';
            *o++ = '.'; /* jansson's ".0" on integral reals */
            *o++ = '0';
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -k - 1; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o += nd;
    }
    *o = '\0';
    return (int)(o - out);
}

size_t api_jw_num_to(char *out, double v) {
    if (!isfinite(v)) {
        memcpy(out, "null", 4);
        return 4;
    }
    v += 0.0; /* -0 -> 0 */
    if (v == 0) {
        memcpy(out, "0.0", 3);
        return 3;
    }
    int n = fast_g9(v, out);
    if (n > 0)
        return (size_t)n;
    char buf[40];
    n = snprintf(buf, sizeof buf, "%.9g", v);
    if (n <= 0 || (size_t)n >= sizeof buf)
        return 0; /* cannot happen: %.9g of a finite double is short */
    /* the same spelling as jansson: "2.0", "1e20", "1e-5" */
    char *e = strchr(buf, 'e');
    if (!e && !strchr(buf, '.')) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    } else if (e) {
        char *start = e + 1, *end;
        if (*start == '+') {
            memmove(start, start + 1, (size_t)(n - (start + 1 - buf)) + 1);
            n--;
        }
        if (*start == '-')
            start++;
        end = start;
        while (*end == '0' && end[1])
            end++;
        if (end != start) {
            memmove(start, end, strlen(end) + 1);
            n -= (int)(end - start);
        }
    }
    memcpy(out, buf, (size_t)n);
    return (size_t)n;
}

void api_jw_num(api_jw *w, double v) {
    char *o = api_jw_room(w, API_JW_NUM_MAX);
    if (!o)
        return;
    size_t n = api_jw_num_to(o, v);
    if (n == 0)
        w->failed = 1;
    w->len += n;
}

size_t api_jw_vec3_to(char *out, const float v[3]) {
    char *o = out;
    *o++ = '[';
    o += api_jw_num_to(o, v[0]);
    *o++ = ',';
    o += api_jw_num_to(o, v[1]);
    *o++ = ',';
    o += api_jw_num_to(o, v[2]);
    *o++ = ']';
    return (size_t)(o - out);
}

char *api_jw_room(api_jw *w, size_t n) {
    return jw_reserve(w, n) ? w->p + w->len : NULL;
}

void api_jw_uint(api_jw *w, uint64_t v) {
    char buf[24];
    char *o = buf + sizeof buf;
    do {
        *--o = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    api_jw_raw(w, o, (size_t)(buf + sizeof buf - o));
}

void api_jw_vec3(api_jw *w, const float v[3]) {
    char *o = api_jw_room(w, API_JW_VEC3_MAX);
    if (!o)
        return;
    w->len += api_jw_vec3_to(o, v);
}

char *api_jw_finish(api_jw *w, size_t *len) {
    if (w->failed) {
        free(w->p);
        w->p = NULL;
        return NULL;
    }
    w->p[w->len] = '\0';
    *len = w->len;
    char *p = w->p;
    w->p = NULL;
    return p;
}

const char *api_path(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return buf;
}

api_code api_json_float(const json_t *v, const char *where, float *out, api_code code, api_err *e) {
    if (!json_is_number(v))
        return api_fail(e, code, "%s is not a finite number", where);
    double d = json_number_value(v);
    float f = (float)d;
    if (!isfinite(d) || !isfinite(f))
        return api_fail(e, code, "%s is not a finite number", where);
    *out = f;
    return API_OK;
}

api_code api_json_get_vec3(const json_t *v, const char *where, float out[3], api_code code,
                           api_err *e) {
    if (!json_is_array(v) || json_array_size(v) != 3)
        return api_fail(e, code, "%s must be an array of 3 finite numbers", where);
    for (size_t i = 0; i < 3; i++) {
        /* The component's name is only formatted on failure: this runs per vertex. */
        const json_t *c = json_array_get(v, i);
        double d = json_is_integer(c) ? (double)json_integer_value(c)
                   : json_is_real(c)  ? json_real_value(c)
                                      : NAN;
        float f = (float)d;
        if (!isfinite(d) || !isfinite(f))
            return api_fail(e, code, "%s[%zu] is not a finite number", where, i);
        out[i] = f;
    }
    return API_OK;
}

api_code api_json_int_range(const json_t *v, const char *where, int64_t lo, int64_t hi,
                            int64_t *out, api_code code, api_err *e) {
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
               fabs(json_real_value(v)) < 9e15) {
        x = (int64_t)json_real_value(v); /* 3.0 is an integer written by a float printer */
    } else {
        goto bad;
    }
    if (x < lo || x > hi)
        goto bad;
    *out = x;
    return API_OK;
bad:
    if (lo == 0 && hi >= UINT32_MAX - 1)
        return api_fail(e, code, "%s must be a non-negative integer", where);
    return api_fail(e, code, "%s must be an integer from %lld to %lld", where, (long long)lo,
                    (long long)hi);
}

static const char *member_path(char *buf, size_t size, const char *obj_where, const char *key) {
    if (!obj_where || !*obj_where)
        return api_path(buf, size, "%s", key);
    return api_path(buf, size, "%s.%s", obj_where, key);
}

static api_code need_object(const json_t *obj, const char *obj_where, api_err *e) {
    if (json_is_object(obj))
        return API_OK;
    if (!obj_where || !*obj_where)
        return api_fail(e, API_E_BAD_REQUEST, "the request body must be a JSON object");
    return api_fail(e, API_E_BAD_REQUEST, "%s must be an object", obj_where);
}

api_code api_obj_vec3(const json_t *obj, const char *obj_where, const char *key, bool required,
                      float out[3], api_err *e) {
    char w[192];
    api_code c = need_object(obj, obj_where, e);
    if (c != API_OK)
        return c;
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return api_fail(e, API_E_BAD_REQUEST, "%s is required",
                            member_path(w, sizeof w, obj_where, key));
        return API_OK;
    }
    if (json_is_array(v) && json_array_size(v) == 3 &&
        api_json_get_vec3(v, "", out, API_E_BAD_REQUEST, NULL) == API_OK)
        return API_OK;
    return api_json_get_vec3(v, member_path(w, sizeof w, obj_where, key), out, API_E_BAD_REQUEST,
                             e);
}

api_code api_obj_number(const json_t *obj, const char *obj_where, const char *key, bool required,
                        double lo, double hi, double *out, api_err *e) {
    char w[192];
    api_code c = need_object(obj, obj_where, e);
    if (c != API_OK)
        return c;
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        if (required)
            return api_fail(e, API_E_BAD_REQUEST, "%s is required",
                            member_path(w, sizeof w, obj_where, key));
        return API_OK;
    }
    /* finite as a float too, as every number navd reads: beyond FLT_MAX is
       also where an overflowing literal lands (parse_again) */
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(d) || !isfinite((float)d))
        return api_fail(e, API_E_BAD_REQUEST, "%s is not a finite number",
                        member_path(w, sizeof w, obj_where, key));
    if (d < lo || d > hi)
        return api_fail(e, API_E_BAD_REQUEST, "%s must be between %g and %g",
                        member_path(w, sizeof w, obj_where, key), lo, hi);
    *out = d;
    return API_OK;
}

api_code api_obj_bool(const json_t *obj, const char *obj_where, const char *key, bool *out,
                      api_err *e) {
    char w[192];
    api_code c = need_object(obj, obj_where, e);
    if (c != API_OK)
        return c;
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return API_OK;
    if (!json_is_boolean(v))
        return api_fail(e, API_E_BAD_REQUEST, "%s must be true or false",
                        member_path(w, sizeof w, obj_where, key));
    *out = json_is_true(v);
    return API_OK;
}

api_code api_obj_uint(const json_t *obj, const char *obj_where, const char *key, uint64_t lo,
                      uint64_t hi, uint64_t *out, api_err *e) {
    char w[192];
    api_code c = need_object(obj, obj_where, e);
    if (c != API_OK)
        return c;
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return API_OK;
    int64_t x;
    c = api_json_int_range(v, member_path(w, sizeof w, obj_where, key), (int64_t)lo,
                           hi > INT64_MAX ? INT64_MAX : (int64_t)hi, &x, API_E_BAD_REQUEST, e);
    if (c == API_OK)
        *out = (uint64_t)x;
    return c;
}
