/* portico.gateway.telemetry.jsonline in C: the same functions, the same bytes, as jsonline.py
 * (read its docstring first: it is the reference, and tests/gateway/test_jsonline.py checks
 * that both write the same bytes for the same input).
 *
 * Why C: a logger writes one JSON entry per request. Written from Python (dicts, then orjson,
 * or strings escaped one by one), it cost 18,000 to 40,000 instructions a request, most of a
 * logger's cost on the gateway (callgrind, bench/bench_instructions.py); the work itself, a
 * copy of ~700 bytes with a test per byte, is a few thousand. Nothing here keeps state: each
 * call reads its arguments and returns a new bytes object.
 *
 * Built by scripts/build_native.py beside the mypyc modules; used while that build is current.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "json_escape.h" /* escape_of, flags_escape */
#include "recordbatch.h" /* Kafka record batches of an EntryBatch's entries */

/* ------------------------------------------------------------------ an output buffer */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    PyObject *owner; /* NULL, or the bytes object data lies in (a big text, sized ahead) */
    char small[4096];
} Buf;

static void buf_init(Buf *b) {
    b->data = b->small;
    b->len = 0;
    b->cap = (Py_ssize_t)sizeof b->small;
    b->owner = NULL;
}

/* a buffer that is a bytes object of cap bytes from the start, trimmed at the end: a text of
 * a megabyte is then written once, not copied again into its bytes object */
static int buf_init_owned(Buf *b, Py_ssize_t cap) {
    b->len = 0;
    b->owner = PyBytes_FromStringAndSize(NULL, cap);
    if (b->owner == NULL) return -1;
    b->data = PyBytes_AS_STRING(b->owner);
    b->cap = cap;
    return 0;
}

static void buf_free(Buf *b) {
    if (b->owner != NULL) {
        Py_CLEAR(b->owner);
    } else if (b->data != b->small) {
        PyMem_Free(b->data);
    }
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int buf_grow(Buf *b, Py_ssize_t more) {
    if (more > PY_SSIZE_T_MAX / 2 - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = b->len + more;
    Py_ssize_t cap = b->cap * 2;
    if (cap < need) cap = need;
    if (b->owner != NULL) {
        if (_PyBytes_Resize(&b->owner, cap) < 0) { /* (it cleared owner) */
            b->data = b->small; /* nothing left to free */
            return -1;
        }
        b->data = PyBytes_AS_STRING(b->owner);
        b->cap = cap;
        return 0;
    }
    char *data;
    if (b->data == b->small) {
        data = PyMem_Malloc((size_t)cap);
        if (data != NULL) memcpy(data, b->small, (size_t)b->len);
    } else {
        data = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* room for more bytes at b->data + b->len */
static inline int buf_reserve(Buf *b, Py_ssize_t more) {
    return more <= b->cap - b->len ? 0 : buf_grow(b, more);
}

/* Most of what is put is short (an entry's pieces, a number): copied by two overlapping
 * loads and stores of a fixed size, which the compiler inlines, rather than by a call of
 * memcpy for a size it cannot know (a third of the cost of an entry's pieces). */
static inline int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    char *out = b->data + b->len;
    if (n >= 8 && n <= 16) {
        uint64_t head, tail;
        memcpy(&head, s, 8);
        memcpy(&tail, s + n - 8, 8);
        memcpy(out, &head, 8);
        memcpy(out + n - 8, &tail, 8);
    } else if (n > 16 && n <= 32) {
        uint64_t w[4];
        memcpy(w, s, 16);
        memcpy(w + 2, s + n - 16, 16);
        memcpy(out, w, 16);
        memcpy(out + n - 16, w + 2, 16);
    } else if (n >= 4 && n < 8) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + n - 4, 4);
        memcpy(out, &head, 4);
        memcpy(out + n - 4, &tail, 4);
    } else {
        memcpy(out, s, (size_t)n);
    }
    b->len += n;
    return 0;
}

static inline int buf_byte(Buf *b, char c) {
    if (buf_reserve(b, 1) < 0) return -1;
    b->data[b->len++] = c;
    return 0;
}

/* ------------------------------------------------------------------ JSON strings */

/* what JSON escapes: 1 for the bytes below 0x20, '"' and '\\' */
static unsigned char ESCAPED[256];

static void escaped_init(void) {
    for (int c = 0; c < 0x20; c++) ESCAPED[c] = 1;
    ESCAPED['"'] = 1;
    ESCAPED['\\'] = 1;
}

/* the escape of c escaped again, for a JSON text written as the content of a JSON string
 * (an entry inside Loki's push): \" becomes \\\", \n becomes \\n, \u0001 \\u0001 */
static inline int escape2_of(unsigned char c, char *out) {
    char first[6];
    int n = escape_of(c, first);
    out[0] = '\\';
    out[1] = '\\';
    if (first[1] == '"' || first[1] == '\\') {
        out[2] = '\\';
        out[3] = first[1];
        return 4;
    }
    memcpy(out + 2, first + 1, (size_t)(n - 1));
    return n + 1;
}

/* c escaped once, or twice */
#define ESCAPE(c, out, twice) ((twice) ? escape2_of((c), (out)) : escape_of((c), (out)))

#if defined(__SSE2__)
#include <emmintrin.h>

/* Sixteen bytes at a time (SSE2, every x86-64 has it): a bit per byte of v that JSON escapes
 * (below 0x20, '"' or '\\'). Bytes from 0x80 up (UTF-8 sequences) never flag. */
static inline int escape_mask(__m128i v) {
    __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash)));
}

/* The tail of a text (fewer than 16 bytes) loaded as one block when the 16 bytes from it lie
 * in one page: reading past the text's end within its page cannot fault (the bytes read there
 * are masked off, never written out). Most header names and values are shorter than 16
 * bytes: byte by byte, they were most of the cost of an entry. 0 when it cannot be loaded. */
static inline int tail_block(const unsigned char *tail, __m128i *v) {
    if (((uintptr_t)tail & 4095) > 4096 - 16) return 0;
    *v = _mm_loadu_si128((const __m128i *)tail);
    return 1;
}

/* UTF-8 text s escaped for a JSON string (no quotes). Each block of 16 is stored whole, then
 * the output advances past its clean bytes only: the room reserved for the worst case (six
 * bytes out per byte in) covers the 16 written ahead while 16 bytes or more remain. */
static inline __attribute__((always_inline)) char *
write_escaped_as(char *out, const unsigned char *s, Py_ssize_t n, int twice) {
    Py_ssize_t i = 0;
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        int mask = escape_mask(v);
        _mm_storeu_si128((__m128i *)out, v);
        if (!mask) {
            out += 16;
            i += 16;
            continue;
        }
        int clean = __builtin_ctz((unsigned int)mask);
        out += clean;
        i += clean;
        out += ESCAPE(s[i], out, twice);
        i++;
    }
    __m128i v;
    if (i < n && tail_block(s + i, &v)) {
        Py_ssize_t rest = n - i;
        if (!(escape_mask(v) & ((1 << rest) - 1))) {
            _mm_storeu_si128((__m128i *)out, v);
            out += rest;
            i = n;
        }
    }
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (ESCAPED[c]) {
            out += ESCAPE(c, out, twice);
        } else {
            *out++ = (char)c;
        }
    }
    return out;
}
#else
/* UTF-8 text s escaped for a JSON string (no quotes), 8 bytes at a time (flags_escape) */
static inline __attribute__((always_inline)) char *
write_escaped_as(char *out, const unsigned char *s, Py_ssize_t n, int twice) {
    Py_ssize_t i = 0, start = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!flags_escape(w)) {
                i += 8;
                continue;
            }
        }
        Py_ssize_t end = i + 8 < n ? i + 8 : n; /* a flagged word (or the tail), byte by byte */
        for (; i < end; i++) {
            if (!ESCAPED[s[i]]) continue;
            memcpy(out, s + start, (size_t)(i - start));
            out += i - start;
            out += ESCAPE(s[i], out, twice);
            start = i + 1;
        }
    }
    memcpy(out, s + start, (size_t)(n - start));
    out += n - start;
    return out;
}
#endif

static char *write_escaped(char *out, const unsigned char *s, Py_ssize_t n) {
    return write_escaped_as(out, s, n, 0);
}

static char *write_escaped_twice(char *out, const unsigned char *s, Py_ssize_t n) {
    return write_escaped_as(out, s, n, 1);
}

/* the room a string of n bytes may take written as JSON, once or twice escaped (quotes
 * included): the worst case, every byte \\u00XX, and a whole block stored past the end */
#define STRING_ROOM2(n) (7 * (n) + 4 + 16)

/* the room a string of n bytes may take written as JSON (quotes included): the worst case,
 * every byte \u00XX, and a whole block stored past the end (write_escaped) */
#define STRING_ROOM(n) (6 * (n) + 2 + 16)

/* text s escaped for a JSON string (no quotes) at the end of b */
static int put_escaped(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (n > PY_SSIZE_T_MAX / 6 - 32) {
        PyErr_NoMemory();
        return -1;
    }
    if (buf_reserve(b, STRING_ROOM(n)) < 0) return -1;
    b->len = write_escaped(b->data + b->len, s, n) - b->data;
    return 0;
}

/* The UTF-8 of str text: an ASCII string's own characters, read in place (what
 * PyUnicode_AsUTF8AndSize gives for it too, after a call and its checks), else that call's. */
static inline const char *utf8_of(PyObject *text, Py_ssize_t *n) {
    if (PyUnicode_IS_COMPACT_ASCII(text)) {
        *n = PyUnicode_GET_LENGTH(text);
        return (const char *)PyUnicode_DATA(text);
    }
    return PyUnicode_AsUTF8AndSize(text, n);
}

/* UTF-8 text s as a JSON string, quotes included */
static int put_utf8_string(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (buf_byte(b, '"') < 0 || put_escaped(b, s, n) < 0) return -1;
    return buf_byte(b, '"');
}

/* UTF-8 text s as a JSON string at out, quotes included, or escaped once more (quotes \\"
 * included) if twice; the room (STRING_ROOM or STRING_ROOM2) reserved by the caller */
static inline char *write_quoted(char *out, const unsigned char *s, Py_ssize_t n, int twice) {
    if (twice) {
        memcpy(out, "\\\"", 2);
        out = write_escaped_twice(out + 2, s, n);
        memcpy(out, "\\\"", 2);
        return out + 2;
    }
    *out++ = '"';
    out = write_escaped(out, s, n);
    *out++ = '"';
    return out;
}

/* the same, escaped once more (quotes \\" included) */
static int put_utf8_string_twice(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (n > PY_SSIZE_T_MAX / 7 - 32) {
        PyErr_NoMemory();
        return -1;
    }
    if (buf_reserve(b, STRING_ROOM2(n)) < 0) return -1;
    b->len = write_quoted(b->data + b->len, s, n, 1) - b->data;
    return 0;
}

/* latin-1 bytes s (a header value as it came) as a JSON string: the UTF-8 of its characters */
static char *write_latin1_string(char *out, const unsigned char *s, Py_ssize_t n, int twice) {
    if (twice) *out++ = '\\';
    *out++ = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t end = n;
#if defined(__SSE2__)
        /* plain ASCII sixteen bytes at a time (as put_escaped); a block holding anything
         * else (an escape, a byte from 0x80 up) goes through the byte loop */
        if (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            if (!(escape_mask(v) | _mm_movemask_epi8(v))) {
                _mm_storeu_si128((__m128i *)out, v);
                out += 16;
                i += 16;
                continue;
            }
            end = i + 16;
        } else {
            __m128i v;
            Py_ssize_t rest = n - i;
            if (tail_block(s + i, &v) &&
                !((escape_mask(v) | _mm_movemask_epi8(v)) & ((1 << rest) - 1))) {
                _mm_storeu_si128((__m128i *)out, v);
                out += rest;
                break;
            }
        }
#endif
        for (; i < end; i++) {
            unsigned char c = s[i];
            if (c >= 0x80) {
                *out++ = (char)(0xC0 | (c >> 6));
                *out++ = (char)(0x80 | (c & 0x3F));
            } else if (ESCAPED[c]) {
                out += ESCAPE(c, out, twice);
            } else {
                *out++ = (char)c;
            }
        }
    }
    if (twice) *out++ = '\\';
    *out++ = '"';
    return out;
}

static int put_str(Buf *b, PyObject *text, int twice) {
    Py_ssize_t n;
    const char *s = utf8_of(text, &n);
    if (s == NULL) return -1; /* a lone surrogate: not UTF-8, as orjson refuses it */
    return twice ? put_utf8_string_twice(b, (const unsigned char *)s, n)
                 : put_utf8_string(b, (const unsigned char *)s, n);
}

/* ------------------------------------------------------------------ other values */

/* the digits of u, right-aligned in out[0..24); where they start */
static const char PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int digits_of(unsigned long long u, char *out) {
    int at = 24;
    while (u >= 100) { /* two digits a division (a time in milliseconds has thirteen) */
        unsigned int pair = (unsigned int)(u % 100);
        u /= 100;
        at -= 2;
        memcpy(out + at, PAIRS + 2 * pair, 2);
    }
    if (u >= 10) {
        at -= 2;
        memcpy(out + at, PAIRS + 2 * u, 2);
    } else {
        out[--at] = (char)('0' + u);
    }
    return at;
}

static int put_int(Buf *b, PyObject *value) {
    int overflow = 0;
    long long v;
#if PY_VERSION_HEX < 0x030C0000
    /* an int of at most two digits (up to 2**60: a size, a status, a time in milliseconds)
     * read from its digits, without the call */
    Py_ssize_t size = PyLong_CheckExact(value) ? Py_SIZE(value) : 3;
    if (size >= -2 && size <= 2) {
        const digit *d = ((PyLongObject *)value)->ob_digit;
        long long magnitude = size == 0 ? 0
                              : (size == 1 || size == -1)
                                  ? (long long)d[0]
                                  : (long long)d[0] | ((long long)d[1] << PyLong_SHIFT);
        v = size < 0 ? -magnitude : magnitude;
    } else
#endif
        v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow) {
        PyObject *text = PyObject_Str(value);
        if (text == NULL) return -1;
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(text, &n);
        int done = s == NULL ? -1 : buf_put(b, s, n);
        Py_DECREF(text);
        return done;
    }
    char digits[25];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    int at = digits_of(u, digits + 1) + 1;
    if (v < 0) digits[--at] = '-';
    return buf_put(b, digits + at, 25 - at);
}

/* A float that is a whole number of thousandths (a latency rounded to the microsecond, in
 * milliseconds) written without dtoa (1,500 instructions a call): w / 1000 with its trailing
 * zeros dropped. That is repr's text: d is the double nearest w / 1000 (checked), a decimal
 * of at most 15 significant digits is the only one that short to name its double, so it is
 * the shortest that reads back, and repr writes it positionally between 1e-4 and 1e16. */
static int put_thousandths(Buf *b, double d) {
    if (!(d > -1e12 && d < 1e12)) return 0;
    long long w = llround(d * 1000.0);
    if ((double)w / 1000.0 != d || (w == 0 && signbit(d))) return 0;
    char text[64];
    char *out = text;
    unsigned long long u = w < 0 ? 0ULL - (unsigned long long)w : (unsigned long long)w;
    if (w < 0) *out++ = '-';
    char digits[24];
    int at = digits_of(u / 1000, digits);
    memcpy(out, digits + at, (size_t)(24 - at));
    out += 24 - at;
    *out++ = '.';
    unsigned int fraction = (unsigned int)(u % 1000);
    if (fraction == 0) {
        *out++ = '0';
    } else {
        *out++ = (char)('0' + fraction / 100);
        if (fraction % 100) {
            *out++ = (char)('0' + fraction / 10 % 10);
            if (fraction % 10) *out++ = (char)('0' + fraction % 10);
        }
    }
    return buf_put(b, text, out - text) < 0 ? -1 : 1;
}

static int put_float(Buf *b, PyObject *value) {
    double d = PyFloat_AS_DOUBLE(value);
    if (!Py_IS_FINITE(d)) return buf_put(b, "null", 4); /* JSON has no NaN nor infinity */
    int done = put_thousandths(b, d);
    if (done) return done < 0 ? -1 : 0;
    char *text = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* repr's */
    if (text == NULL) return -1;
    done = buf_put(b, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return done;
}

/* a tuple of strings as one JSON string (the caller's pieces of one text, unjoined) */
static int put_joined(Buf *b, PyObject *parts, int twice) {
    if ((twice && buf_byte(b, '\\') < 0) || buf_byte(b, '"') < 0) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(parts); i++) {
        PyObject *part = PyTuple_GET_ITEM(parts, i);
        if (!PyUnicode_Check(part)) {
            PyErr_SetString(PyExc_TypeError, "a tuple to write must hold strings");
            return -1;
        }
        Py_ssize_t n;
        const char *text = utf8_of(part, &n);
        if (text == NULL) return -1;
        if (twice) {
            if (n > PY_SSIZE_T_MAX / 7 - 32) {
                PyErr_NoMemory();
                return -1;
            }
            if (buf_reserve(b, STRING_ROOM2(n)) < 0) return -1;
            b->len = write_escaped_twice(b->data + b->len, (const unsigned char *)text, n) - b->data;
        } else if (put_escaped(b, (const unsigned char *)text, n) < 0) {
            return -1;
        }
    }
    if (twice && buf_byte(b, '\\') < 0) return -1;
    return buf_byte(b, '"');
}

/* value as JSON; twice: that JSON escaped as the content of a JSON string */
static int put_value(Buf *b, PyObject *value, int twice) {
    if (PyUnicode_CheckExact(value)) return put_str(b, value, twice);
    if (PyTuple_CheckExact(value)) return put_joined(b, value, twice);
    if (PyBytes_Check(value)) {
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(value);
        if (twice) return put_escaped(b, text, PyBytes_GET_SIZE(value));
        return buf_put(b, (const char *)text, PyBytes_GET_SIZE(value));
    }
    if (value == Py_None) return buf_put(b, "null", 4);
    if (value == Py_True) return buf_put(b, "true", 4);
    if (value == Py_False) return buf_put(b, "false", 5);
    if (PyLong_CheckExact(value)) return put_int(b, value);
    if (PyFloat_CheckExact(value)) return put_float(b, value);
    if (PyUnicode_Check(value)) return put_str(b, value, twice);
    PyErr_Format(PyExc_TypeError, "cannot write a %.100s as JSON", Py_TYPE(value)->tp_name);
    return -1;
}

static PyObject *bytes_of(Buf *b) {
    if (b->owner != NULL) {
        PyObject *out = b->owner;
        b->owner = NULL;
        if (_PyBytes_Resize(&out, b->len) < 0) return NULL;
        return out;
    }
    PyObject *out = PyBytes_FromStringAndSize(b->data, b->len);
    buf_free(b);
    return out;
}

/* what an entry's header objects are written from (EntryBatch.add); NULL: no headers */
typedef struct EntryHeaders EntryHeaders;
struct EntryHeaders {
    PyObject *verdicts; /* dict: name → whether it is a credential */
    PyObject *asker;    /* the Verdicts that judges the other names */
    PyObject *request;  /* list of (name, value) */
    PyObject *response; /* list of (name, value), or None */
    PyObject *lines;    /* else the node's lines (list), or None */
    PyObject *wire;     /* WireNames */
    PyObject *added;
    PyObject *tag;
};
static int put_entry_headers(Buf *b, PyObject *which, EntryHeaders *headers, int twice);
static PyObject *REQUEST_HEADERS; /* the values that stand for them */
static PyObject *RESPONSE_HEADERS;

/* pieces[0], values[0], pieces[1], ... values[count - 1], pieces[count] */
static int put_rendered(Buf *b, PyObject **piece, PyObject *const *value, Py_ssize_t count,
                        EntryHeaders *headers, int twice) {
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (!PyBytes_Check(piece[i])) {
            PyErr_SetString(PyExc_TypeError, "pieces must be bytes");
            return -1;
        }
        Py_ssize_t n = PyBytes_GET_SIZE(piece[i]);
        PyObject *v = i < count ? value[i] : NULL;
        if (v != NULL && PyUnicode_CheckExact(v)) {
            /* the usual pair, a piece and a string: room for both at once, both written
             * through a pointer of their own (escaped twice, quotes included, in an escaped
             * batch) */
            Py_ssize_t len;
            const char *text = utf8_of(v, &len);
            if (text == NULL) return -1;
            if (len > PY_SSIZE_T_MAX / 7 - 32 - n) {
                PyErr_NoMemory();
                return -1;
            }
            if (buf_reserve(b, n + (twice ? STRING_ROOM2(len) : STRING_ROOM(len))) < 0) return -1;
            char *out = b->data + b->len;
            memcpy(out, PyBytes_AS_STRING(piece[i]), (size_t)n);
            out = write_quoted(out + n, (const unsigned char *)text, len, twice);
            b->len = out - b->data;
            continue;
        }
        if (buf_put(b, PyBytes_AS_STRING(piece[i]), n) < 0) return -1;
        if (v == NULL) break;
        if (headers != NULL && (v == REQUEST_HEADERS || v == RESPONSE_HEADERS)) {
            if (put_entry_headers(b, v, headers, twice) < 0) return -1;
        } else if (put_value(b, v, twice) < 0) {
            return -1;
        }
    }
    return 0;
}

/* render(pieces, values) */
static PyObject *render(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "render(pieces, values)");
        return NULL;
    }
    PyObject *pieces = PySequence_Fast(args[0], "pieces must be a sequence");
    if (pieces == NULL) return NULL;
    PyObject *values = PySequence_Fast(args[1], "values must be a sequence");
    if (values == NULL) {
        Py_DECREF(pieces);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(values);
    PyObject **piece = PySequence_Fast_ITEMS(pieces);
    PyObject **value = PySequence_Fast_ITEMS(values);
    Buf b;
    buf_init(&b);
    if (PySequence_Fast_GET_SIZE(pieces) != count + 1) {
        PyErr_SetString(PyExc_ValueError, "render needs one piece more than values");
        goto fail;
    }
    if (put_rendered(&b, piece, value, count, NULL, 0) < 0) goto fail;
    Py_DECREF(pieces);
    Py_DECREF(values);
    return bytes_of(&b);
fail:
    buf_free(&b);
    Py_DECREF(pieces);
    Py_DECREF(values);
    return NULL;
}

/* ------------------------------------------------------------------ header objects */

static PyObject *SECRET;    /* "secret" */
static PyObject *WIRE_NAME; /* "wire_name" */
static const char REDACTED[] = "\"[REDACTED]\"";
static const char REDACTED2[] = "\\\"[REDACTED]\\\""; /* (escaped again) */

/* one header of an object: its name (a reference held), its value, and its place among the
 * headers of the same name */
typedef struct {
    PyObject *name;
    const char *name_utf8;
    Py_ssize_t name_len;
    const unsigned char *value; /* NULL: redacted */
    Py_ssize_t value_len;
    int latin1; /* value: latin-1 bytes (else UTF-8) */
    Py_ssize_t next;  /* the next header of this name, -1 if none */
    Py_ssize_t last;  /* (first of a name) its last header so far */
    Py_ssize_t count; /* (first of a name) how many; 0: not the first */
} Header;

typedef struct {
    Header *items;
    Py_ssize_t len;
    Py_ssize_t cap;
    Header small[32];
    PyObject *firsts; /* past 32 headers: name → index of its first header */
} Headers;

static void headers_init(Headers *h) {
    h->items = h->small;
    h->len = 0;
    h->cap = 32;
    h->firsts = NULL;
}

static void headers_free(Headers *h) {
    for (Py_ssize_t i = 0; i < h->len; i++) Py_DECREF(h->items[i].name);
    if (h->items != h->small) PyMem_Free(h->items);
    Py_XDECREF(h->firsts);
}

/* the index of the first header named like items[at], or at itself */
static Py_ssize_t first_of(Headers *h, Py_ssize_t at) {
    Header *item = &h->items[at];
    if (h->firsts != NULL) {
        PyObject *index = PyLong_FromSsize_t(at);
        if (index == NULL) return -2;
        PyObject *found = PyDict_SetDefault(h->firsts, item->name, index);
        Py_DECREF(index);
        return found == NULL ? -2 : PyLong_AsSsize_t(found);
    }
    for (Py_ssize_t i = 0; i < at; i++) {
        Header *other = &h->items[i];
        if (other->count == 0) continue;
        if (other->name == item->name ||
            (other->name_len == item->name_len &&
             memcmp(other->name_utf8, item->name_utf8, (size_t)item->name_len) == 0))
            return i;
    }
    return at;
}

/* add a header (takes the reference to name; name_utf8: its UTF-8 if known, else NULL) */
static int headers_add(Headers *h, PyObject *name, const char *name_utf8, Py_ssize_t name_len,
                       const unsigned char *value, Py_ssize_t len, int latin1) {
    if (h->len == h->cap) {
        Py_ssize_t cap = h->cap * 2;
        Header *items = h->items == h->small ? PyMem_Malloc(sizeof(Header) * (size_t)cap)
                                              : PyMem_Realloc(h->items, sizeof(Header) * (size_t)cap);
        if (items == NULL) {
            Py_DECREF(name);
            PyErr_NoMemory();
            return -1;
        }
        if (h->items == h->small) memcpy(items, h->small, sizeof h->small);
        h->items = items;
        h->cap = cap;
        if (h->firsts == NULL) { /* many headers: find repeats through a dict from now on */
            h->firsts = PyDict_New();
            if (h->firsts == NULL) {
                Py_DECREF(name);
                return -1;
            }
            for (Py_ssize_t i = 0; i < h->len; i++) {
                if (h->items[i].count == 0) continue;
                PyObject *index = PyLong_FromSsize_t(i);
                if (index == NULL || PyDict_SetItem(h->firsts, h->items[i].name, index) < 0) {
                    Py_XDECREF(index);
                    Py_DECREF(name);
                    return -1;
                }
                Py_DECREF(index);
            }
        }
    }
    Header *item = &h->items[h->len];
    item->name = name;
    if (name_utf8 != NULL) {
        item->name_utf8 = name_utf8;
        item->name_len = name_len;
    } else {
        item->name_utf8 = utf8_of(name, &item->name_len);
        if (item->name_utf8 == NULL) {
            item->name = NULL;
            Py_DECREF(name);
            return -1;
        }
    }
    item->value = value;
    item->value_len = len;
    item->latin1 = latin1;
    item->next = -1;
    item->last = h->len;
    item->count = 1;
    Py_ssize_t at = h->len++;
    Py_ssize_t first = first_of(h, at);
    if (first == -2) return -1;
    if (first != at) {
        Header *head = &h->items[first];
        h->items[head->last].next = at;
        head->last = at;
        head->count++;
        item->count = 0;
    }
    return 0;
}

/* a header's value as JSON at out (value NULL: redacted; room made by the caller) */
static char *write_value(char *out, const unsigned char *value, Py_ssize_t len, int latin1,
                         int twice) {
    if (value == NULL) {
        if (twice) {
            memcpy(out, REDACTED2, sizeof REDACTED2 - 1);
            return out + sizeof REDACTED2 - 1;
        }
        memcpy(out, REDACTED, sizeof REDACTED - 1);
        return out + sizeof REDACTED - 1;
    }
    if (latin1) return write_latin1_string(out, value, len, twice);
    if (twice) {
        *out++ = '\\';
        *out++ = '"';
        out = write_escaped_twice(out, value, len);
        *out++ = '\\';
    } else {
        *out++ = '"';
        out = write_escaped(out, value, len);
    }
    *out++ = '"';
    return out;
}

static inline char *write_header_value(char *out, Header *item, int twice) {
    return write_value(out, item->value, item->value_len, item->latin1, twice);
}

/* a quote, escaped if twice */
static inline char *write_quote(char *out, int twice) {
    if (twice) *out++ = '\\';
    *out++ = '"';
    return out;
}

/* an object member's name, "name": (escaped again if twice), at out (room made by the
 * caller: STRING_ROOM2(len) + 1) */
static inline char *write_name(char *out, const char *name, Py_ssize_t len, int twice) {
    out = write_quote(out, twice);
    out = twice ? write_escaped_twice(out, (const unsigned char *)name, len)
                : write_escaped(out, (const unsigned char *)name, len);
    out = write_quote(out, twice);
    *out++ = ':';
    return out;
}

/* h as a JSON object at the end of b: room made once for all of it, then written through a
 * pointer of its own (a check of the room and a store of the length for each byte put, a
 * colon or a quote, were a fifth of the cost of an entry's headers) */
static int put_headers(Buf *b, Headers *h, int twice) {
    Py_ssize_t room = 2;
    for (Py_ssize_t i = 0; i < h->len; i++) {
        Header *item = &h->items[i];
        Py_ssize_t longest = item->name_len > item->value_len ? item->name_len : item->value_len;
        if (longest > PY_SSIZE_T_MAX / 16 - 64 || room > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        /* its name (written once, counted each time), ":", "[", its value, "," and "]" */
        room += STRING_ROOM2(item->name_len) + STRING_ROOM2(item->value_len) + 4;
    }
    if (buf_reserve(b, room) < 0) return -1;
    char *out = b->data + b->len;
    *out++ = '{';
    int any = 0;
    for (Py_ssize_t i = 0; i < h->len; i++) {
        Header *item = &h->items[i];
        if (item->count == 0) continue;
        if (any) *out++ = ',';
        any = 1;
        out = write_name(out, item->name_utf8, item->name_len, twice);
        if (item->count == 1) {
            out = write_header_value(out, item, twice);
            continue;
        }
        *out++ = '[';
        for (Py_ssize_t j = i; j >= 0; j = h->items[j].next) {
            if (j != i) *out++ = ',';
            out = write_header_value(out, &h->items[j], twice);
        }
        *out++ = ']';
    }
    *out++ = '}';
    b->len = out - b->data;
    return 0;
}

/* an entry's headers object as bytes (pairs_object, lines_object: what EntryBatch.add writes) */
static PyObject *entry_headers_written(PyObject *which, EntryHeaders *e) {
    Buf b;
    buf_init(&b);
    if (put_entry_headers(&b, which, e, 0) < 0) {
        buf_free(&b);
        return NULL;
    }
    return bytes_of(&b);
}

/* whether name is a credential: from verdicts, else asked of asker.secret; -1 on error */
static int is_secret(PyObject *name, PyObject *verdicts, PyObject *asker) {
    PyObject *known = PyDict_GetItemWithError(verdicts, name);
    if (known != NULL) return PyObject_IsTrue(known);
    if (PyErr_Occurred()) return -1;
    PyObject *answer = PyObject_CallMethodOneArg(asker, SECRET, name);
    if (answer == NULL) return -1;
    int secret = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return secret;
}

/* one (name, value) tuple of str into h */
static int add_pair(Headers *h, PyObject *pair, PyObject *verdicts, PyObject *asker) {
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0)) ||
        !PyUnicode_Check(PyTuple_GET_ITEM(pair, 1))) {
        PyErr_SetString(PyExc_TypeError, "pairs must hold (str, str) tuples");
        return -1;
    }
    PyObject *name = PyTuple_GET_ITEM(pair, 0);
    int secret = is_secret(name, verdicts, asker);
    if (secret < 0) return -1;
    const char *value = NULL;
    Py_ssize_t len = 0;
    if (!secret) {
        value = utf8_of(PyTuple_GET_ITEM(pair, 1), &len);
        if (value == NULL) return -1;
    }
    Py_INCREF(name);
    return headers_add(h, name, NULL, 0, (const unsigned char *)value, len, 0);
}

/* pairs (a list of (name, value) tuples of str) into h */
static int add_pairs(Headers *h, PyObject *pairs, PyObject *verdicts, PyObject *asker) {
    if (!PyList_Check(pairs)) {
        PyErr_SetString(PyExc_TypeError, "pairs must be a list");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
        if (add_pair(h, PyList_GET_ITEM(pairs, i), verdicts, asker) < 0) return -1;
    }
    return 0;
}

/* pairs_object(pairs, verdicts, asker) */
static PyObject *pairs_object(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "pairs_object(pairs, verdicts: dict, asker)");
        return NULL;
    }
    EntryHeaders e = {args[1], args[2], args[0], Py_None, Py_None, Py_None, Py_None, Py_None};
    return entry_headers_written(REQUEST_HEADERS, &e);
}

/* ------------------------------------------------------------------ a node's header names */

/* WireNames(limit): what lines_object learnt of a node's header names as they came on the
 * wire (raw bytes → the lower-cased name and whether it is a credential), at most limit of
 * them. A dict keyed by the raw bytes hashed each name of each answer anew (the bytes are new
 * objects every time: siphash, then the lookup, ~380 instructions a header); this table
 * hashes with name_hash and compares with memcmp, and keeps each name's UTF-8 at hand. */
typedef struct {
    char *raw;
    Py_ssize_t raw_len;
    uint64_t hash;
    PyObject *name; /* str, a reference held */
    const char *utf8;
    Py_ssize_t utf8_len;
    int secret;
    Py_hash_t name_hash; /* the name's hash as a str (-1: not exactly a str) */
    char *json;          /* the name as JSON with its colon, "name": (then escaped again) */
    Py_ssize_t json_len;
    Py_ssize_t json2_len;
} Known;

typedef struct {
    PyObject_HEAD
    Known *items;
    Py_ssize_t len;
    Py_ssize_t cap;
    Py_ssize_t limit;
    int32_t *slots; /* open addressing: an index into items, -1 empty */
    Py_ssize_t nslots; /* a power of two, at least twice len */
} WireNames;

static PyTypeObject WireNamesType;

/* A hash of a header name, eight bytes at a time (FNV-1a a byte at a time was a tenth of the
 * cost of a relayed head): each word mixed in by a multiply and a rotation; the tail's bytes
 * read whole, the length mixed in last. The names are the node's, not the client's: no
 * flooding to guard against, and the table is bounded all the same. */
static uint64_t name_hash(const char *s, Py_ssize_t n) {
    const uint64_t prime = 0x100000001b3ULL * 0x9E3779B1ULL;
    uint64_t h = 0xcbf29ce484222325ULL;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * prime;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, (size_t)(n - i));
    h = (h ^ tail ^ ((uint64_t)n << 56)) * prime;
    return h ^ (h >> 32);
}

static Known *wire_find(WireNames *w, const char *raw, Py_ssize_t n, uint64_t hash) {
    if (w->slots == NULL) return NULL;
    size_t mask = (size_t)w->nslots - 1;
    for (size_t j = (size_t)hash & mask;; j = (j + 1) & mask) {
        int32_t at = w->slots[j];
        if (at < 0) return NULL;
        Known *k = &w->items[at];
        if (k->hash == hash && k->raw_len == n && memcmp(k->raw, raw, (size_t)n) == 0) return k;
    }
}

static void wire_place(WireNames *w, Py_ssize_t at) {
    size_t mask = (size_t)w->nslots - 1;
    size_t j = (size_t)w->items[at].hash & mask;
    while (w->slots[j] >= 0) j = (j + 1) & mask;
    w->slots[j] = (int32_t)at;
}

/* remember raw → (name, secret) if there is room; 0, or -1 on error (memory) */
static int wire_add(WireNames *w, const char *raw, Py_ssize_t n, uint64_t hash, PyObject *name,
                    int secret) {
    if (w->len >= w->limit) return 0;
    Py_ssize_t utf8_len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &utf8_len);
    if (utf8 == NULL) return -1;
    if (w->len == w->cap) {
        Py_ssize_t cap = w->cap ? w->cap * 2 : 8;
        Known *items = PyMem_Realloc(w->items, sizeof(Known) * (size_t)cap);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->items = items;
        w->cap = cap;
    }
    if ((w->len + 1) * 2 > w->nslots) {
        Py_ssize_t nslots = w->nslots ? w->nslots * 2 : 16;
        int32_t *slots = PyMem_Malloc(sizeof(int32_t) * (size_t)nslots);
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        PyMem_Free(w->slots);
        w->slots = slots;
        w->nslots = nslots;
        for (Py_ssize_t j = 0; j < nslots; j++) slots[j] = -1;
        for (Py_ssize_t at = 0; at < w->len; at++) wire_place(w, at);
    }
    Py_hash_t name_hash = -1;
    if (PyUnicode_CheckExact(name)) {
        name_hash = PyObject_Hash(name);
        if (name_hash == -1) return -1;
    }
    if (utf8_len > PY_SSIZE_T_MAX / 16 - 64) {
        PyErr_NoMemory();
        return -1;
    }
    /* the raw bytes, then the name's JSON, then that JSON escaped again */
    Py_ssize_t room = n + STRING_ROOM(utf8_len) + 1 + STRING_ROOM2(utf8_len) + 1;
    char *copy = PyMem_Malloc((size_t)room);
    if (copy == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(copy, raw, (size_t)n);
    char *json = copy + n;
    char *out = write_name(json, utf8, utf8_len, 0);
    Py_ssize_t json_len = out - json;
    out = write_name(out, utf8, utf8_len, 1);
    Known *k = &w->items[w->len];
    k->name_hash = name_hash;
    k->json = json;
    k->json_len = json_len;
    k->json2_len = out - json - json_len;
    k->raw = copy;
    k->raw_len = n;
    k->hash = hash;
    Py_INCREF(name);
    k->name = name;
    k->utf8 = utf8;
    k->utf8_len = utf8_len;
    k->secret = secret;
    wire_place(w, w->len++);
    return 0;
}

static int wire_init(WireNames *self, PyObject *args, PyObject *kwargs) {
    Py_ssize_t limit;
    static char *kwlist[] = {"limit", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "n", kwlist, &limit)) return -1;
    if (limit < 0 || limit > INT32_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "limit out of range");
        return -1;
    }
    self->limit = limit;
    return 0;
}

static void wire_dealloc(WireNames *self) {
    for (Py_ssize_t i = 0; i < self->len; i++) {
        PyMem_Free(self->items[i].raw);
        Py_DECREF(self->items[i].name);
    }
    PyMem_Free(self->items);
    PyMem_Free(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t wire_length(WireNames *self) { return self->len; }

static PySequenceMethods WIRE_SEQUENCE = {.sq_length = (lenfunc)wire_length};

static PyTypeObject WireNamesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "portico.gateway.telemetry.jsonline.WireNames",
    .tp_basicsize = sizeof(WireNames),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "WireNames(limit): a node's header names as lines_object learnt them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)wire_init,
    .tp_dealloc = (destructor)wire_dealloc,
    .tp_as_sequence = &WIRE_SEQUENCE,
};

/* the name and verdict of raw, from wire, else asked of asker.wire_name (and remembered) */
static Known *wire_name_of(WireNames *w, PyObject *raw, PyObject *asker, Known *scratch) {
    const char *text = PyBytes_AS_STRING(raw);
    Py_ssize_t n = PyBytes_GET_SIZE(raw);
    uint64_t hash = name_hash(text, n);
    Known *found = wire_find(w, text, n, hash);
    if (found != NULL) return found;
    PyObject *answer = PyObject_CallMethodOneArg(asker, WIRE_NAME, raw);
    if (answer == NULL) return NULL;
    if (!PyTuple_Check(answer) || PyTuple_GET_SIZE(answer) != 2 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(answer, 0))) {
        Py_DECREF(answer);
        PyErr_SetString(PyExc_TypeError, "wire_name must give (str, bool)");
        return NULL;
    }
    PyObject *name = PyTuple_GET_ITEM(answer, 0);
    int secret = PyObject_IsTrue(PyTuple_GET_ITEM(answer, 1));
    if (secret < 0 || wire_add(w, text, n, hash, name, secret) < 0) {
        Py_DECREF(answer);
        return NULL;
    }
    found = wire_find(w, text, n, hash);
    if (found != NULL) {
        Py_DECREF(answer);
        return found;
    }
    /* not remembered (the table is full): the answer itself, for this header */
    scratch->name = name;
    Py_INCREF(name);
    Py_DECREF(answer);
    scratch->utf8 = NULL;
    scratch->utf8_len = 0;
    scratch->secret = secret;
    return scratch;
}

/* a relayed head into h: the node's lines (four to a header), then added, then tag */
static int add_lines(Headers *h, PyObject *lines, WireNames *wire, PyObject *verdicts,
                     PyObject *asker, PyObject *added, PyObject *tag) {
    Py_ssize_t count = PyList_GET_SIZE(lines);
    if (count % 4) {
        PyErr_SetString(PyExc_ValueError, "lines come four to a header");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i += 4) {
        PyObject *raw = PyList_GET_ITEM(lines, i);
        PyObject *value = PyList_GET_ITEM(lines, i + 2);
        if (!PyBytes_Check(raw) || !PyBytes_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "lines must be bytes");
            return -1;
        }
        Known scratch;
        Known *known = wire_name_of(wire, raw, asker, &scratch);
        if (known == NULL) return -1;
        if (known != &scratch) Py_INCREF(known->name); /* (scratch's is a new reference) */
        const unsigned char *text =
            known->secret ? NULL : (const unsigned char *)PyBytes_AS_STRING(value);
        if (headers_add(h, known->name, known->utf8, known->utf8_len, text,
                        PyBytes_GET_SIZE(value), 1) < 0)
            return -1;
    }
    if (added != Py_None && add_pairs(h, added, verdicts, asker) < 0) return -1;
    if (tag != Py_None) {
        if (!PyTuple_Check(tag) || PyTuple_GET_SIZE(tag) != 2) {
            PyErr_SetString(PyExc_TypeError, "tag must be a (name, value) tuple or None");
            return -1;
        }
        if (add_pair(h, tag, verdicts, asker) < 0) return -1;
    }
    return 0;
}

static int lines_args_ok(PyObject *lines, PyObject *wire, PyObject *verdicts) {
    if (PyList_Check(lines) && PyObject_TypeCheck(wire, &WireNamesType) && PyDict_Check(verdicts))
        return 1;
    PyErr_SetString(PyExc_TypeError,
                    "lines_object(lines: list, wire: WireNames, verdicts: dict, asker, added, "
                    "tag)");
    return 0;
}

/* lines_object(lines, wire, verdicts, asker, added, tag) */
static PyObject *lines_object(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "lines_object takes six arguments");
        return NULL;
    }
    if (!lines_args_ok(args[0], args[1], args[2])) return NULL;
    EntryHeaders e = {args[2], args[3], Py_None, Py_None, args[0], args[1], args[4], args[5]};
    return entry_headers_written(RESPONSE_HEADERS, &e);
}

/* ------------------------------------------------------------------ stamped lines */

/* the room a stamped line of size bytes may take (its escapes, its stamp and brackets) */
static inline Py_ssize_t stamped_room(Py_ssize_t size) { return size + size / 4 + 40; }

/* one line beside its time (seconds since the epoch) as Loki's [ "<ns>", "<line>" ] */
static int put_stamped(Buf *b, Py_ssize_t index, const char *line, Py_ssize_t size,
                       double seconds, int escaped) {
    double nanos = seconds * 1000000000.0;
    if (!(nanos > -9.2e18 && nanos < 9.2e18)) {
        PyErr_SetString(PyExc_ValueError, "a time out of range");
        return -1;
    }
    long long whole = (long long)nanos; /* truncated toward zero, as int() */
    char digits[26];
    unsigned long long u = whole < 0 ? 0ULL - (unsigned long long)whole : (unsigned long long)whole;
    int at = digits_of(u, digits + 2) + 2;
    if (whole < 0) digits[--at] = '-';
    digits[--at] = '"';
    digits[--at] = '[';
    if ((index && buf_byte(b, ',') < 0) || buf_put(b, digits + at, 26 - at) < 0 ||
        buf_put(b, "\",", 2) < 0)
        return -1;
    if (escaped) { /* (written escaped already) */
        if (buf_byte(b, '"') < 0 || buf_put(b, line, size) < 0 || buf_byte(b, '"') < 0) return -1;
    } else if (put_utf8_string(b, (const unsigned char *)line, size) < 0) {
        return -1;
    }
    return buf_byte(b, ']');
}

/* stamped_lines(lines, logged_at) */
static PyObject *stamped_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "stamped_lines(lines: list, logged_at: list)");
        return NULL;
    }
    PyObject *lines = args[0], *logged_at = args[1];
    Py_ssize_t n = PyList_GET_SIZE(lines);
    if (PyList_GET_SIZE(logged_at) != n) {
        PyErr_SetString(PyExc_ValueError, "lines and logged_at must have the same length");
        return NULL;
    }
    /* room for the lines with an escape in four bytes, and each line's stamp and brackets */
    Py_ssize_t room = 64;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyBytes_Check(line)) {
            PyErr_SetString(PyExc_TypeError, "lines must be bytes");
            return NULL;
        }
        Py_ssize_t size = PyBytes_GET_SIZE(line);
        if (size > (PY_SSIZE_T_MAX - room) / 2 - 64) {
            PyErr_NoMemory();
            return NULL;
        }
        room += stamped_room(size);
    }
    Buf b;
    if (buf_init_owned(&b, room) < 0) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        double seconds = PyFloat_AsDouble(PyList_GET_ITEM(logged_at, i));
        if (seconds == -1.0 && PyErr_Occurred()) goto fail;
        if (put_stamped(&b, i, PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line), seconds, 0) < 0)
            goto fail;
    }
    return bytes_of(&b);
fail:
    buf_free(&b);
    return NULL;
}

/* ------------------------------------------------------------------ a batch of entries */

/* EntryBatch(between, expected, escaped): a logger's batch, its entries written straight
 * into one buffer with `between` between them (a sink's separator: "," for a JSON array, "\n" for
 * lines...), so that an entry is no object of its own and the batch's body is the buffer
 * itself (view(): no copy to send it). `expected`: the entries the batch will likely hold
 * (batch_max_size): once the first entry's size is known, room for that many is reserved at
 * once (at most RESERVE_MAX bytes), instead of growing the buffer a doubling at a time.
 * `escaped`: each entry is written as the content of a JSON string, its pieces given escaped
 * so (aggregator-logger's entries are strings in Loki's push: escaping them again when the
 * batch was sent cost a third of what writing them did), and stamped() takes them as they
 * are. */
#define RESERVE_MAX (8 * 1024 * 1024)

typedef struct {
    PyObject_HEAD
    Buf buf;
    PyObject *between; /* bytes */
    Py_ssize_t *starts; /* where each entry starts and ends in buf */
    Py_ssize_t *ends;
    double *at;         /* when each was logged (epoch seconds) */
    Py_ssize_t count;
    Py_ssize_t cap;
    Py_ssize_t expected;
    Py_ssize_t exports; /* buffer views alive: the data may not move nor change */
    int escaped; /* each entry written as the content of a JSON string (see batch_init) */
} EntryBatch;

static PyTypeObject EntryBatchType;

/* ------------------------------------------------------------------ headers written straight */

/* Most heads repeat no name: their object is written header by header as it is read, with no
 * table of headers to group repeats (a Header stored, its first of a name looked for among
 * the others, then read again to write it: two thirds of an entry's headers). The names
 * written so far are noted to tell a repeat: a bit of a word per name's hash, the names
 * themselves compared only when their bit was set already. A repeat (or anything unusual:
 * a malformed argument, a name that is not exactly a str, more than SEEN_MAX headers) sends
 * the caller back to the table (put_entry_headers), which writes the same object or raises
 * the same error as ever. */
#define SEEN_MAX 32

typedef struct {
    uint64_t bits;
    Py_ssize_t count;
    const char *utf8[SEEN_MAX];
    Py_ssize_t len[SEEN_MAX];
} Seen;

/* 1: a name not written yet (noted now); 0: a repeat, or too many to note */
static inline int seen_first(Seen *seen, const char *utf8, Py_ssize_t len, Py_hash_t hash) {
    uint64_t bit = 1ULL << ((uint64_t)hash & 63);
    if (seen->bits & bit) {
        for (Py_ssize_t i = 0; i < seen->count; i++) {
            if (seen->len[i] == len && memcmp(seen->utf8[i], utf8, (size_t)len) == 0) return 0;
        }
    }
    if (seen->count == SEEN_MAX) return 0;
    seen->bits |= bit;
    seen->utf8[seen->count] = utf8;
    seen->len[seen->count++] = len;
    return 1;
}

/* one member at the end of b, a comma before it unless it is the object's first: the name
 * (name_json: its JSON and colon ready-made, else its UTF-8 escaped here), then the value
 * (NULL: redacted) */
static int put_member(Buf *b, int *first, const char *name_json, Py_ssize_t name_json_len,
                      const char *name, Py_ssize_t name_len, const unsigned char *value,
                      Py_ssize_t value_len, int latin1, int twice) {
    if (name_len > PY_SSIZE_T_MAX / 16 - 64 || value_len > PY_SSIZE_T_MAX / 16 - 64) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t room = 1 + (name_json != NULL ? name_json_len : STRING_ROOM2(name_len) + 1) +
                      STRING_ROOM2(value_len);
    if (buf_reserve(b, room) < 0) return -1;
    char *out = b->data + b->len;
    if (!*first) *out++ = ',';
    *first = 0;
    if (name_json != NULL) {
        memcpy(out, name_json, (size_t)name_json_len);
        out += name_json_len;
    } else {
        out = write_name(out, name, name_len, twice);
    }
    out = write_value(out, value, value_len, latin1, twice);
    b->len = out - b->data;
    return 0;
}

/* a (name, value) pair of str written straight: 1, 0 (the table must write the object), -1 */
static int put_pair_direct(Buf *b, PyObject *pair, EntryHeaders *e, Seen *seen, int *first,
                           int twice) {
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return 0;
    PyObject *name = PyTuple_GET_ITEM(pair, 0);
    PyObject *text = PyTuple_GET_ITEM(pair, 1);
    if (!PyUnicode_CheckExact(name) || !PyUnicode_Check(text)) return 0;
    Py_hash_t hash = PyObject_Hash(name); /* (a str's is kept once computed) */
    if (hash == -1) return -1;
    Py_ssize_t name_len;
    const char *name_utf8 = utf8_of(name, &name_len);
    if (name_utf8 == NULL) return -1;
    if (!seen_first(seen, name_utf8, name_len, hash)) return 0;
    int secret = is_secret(name, e->verdicts, e->asker);
    if (secret < 0) return -1;
    const char *value = NULL;
    Py_ssize_t value_len = 0;
    if (!secret) {
        value = utf8_of(text, &value_len);
        if (value == NULL) return -1;
    }
    if (put_member(b, first, NULL, 0, name_utf8, name_len, (const unsigned char *)value,
                   value_len, 0, twice) < 0)
        return -1;
    return 1;
}

static int put_pairs_direct(Buf *b, PyObject *pairs, EntryHeaders *e, Seen *seen, int *first,
                            int twice) {
    if (!PyList_CheckExact(pairs)) return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
        int done = put_pair_direct(b, PyList_GET_ITEM(pairs, i), e, seen, first, twice);
        if (done <= 0) return done;
    }
    return 1;
}

/* a relayed head written straight: the node's lines, then added, then tag */
static int put_lines_direct(Buf *b, EntryHeaders *e, Seen *seen, int *first, int twice) {
    PyObject *lines = e->lines;
    if (!PyList_CheckExact(lines) || !PyObject_TypeCheck(e->wire, &WireNamesType) ||
        !PyDict_Check(e->verdicts))
        return 0;
    Py_ssize_t count = PyList_GET_SIZE(lines);
    if (count % 4) return 0;
    WireNames *wire = (WireNames *)e->wire;
    for (Py_ssize_t i = 0; i < count; i += 4) {
        PyObject *raw = PyList_GET_ITEM(lines, i);
        PyObject *value = PyList_GET_ITEM(lines, i + 2);
        if (!PyBytes_Check(raw) || !PyBytes_Check(value)) return 0;
        Known scratch;
        Known *known = wire_name_of(wire, raw, e->asker, &scratch);
        if (known == NULL) return -1;
        if (known == &scratch) { /* not in the table (full): the table's way */
            Py_DECREF(scratch.name);
            return 0;
        }
        if (known->name_hash == -1 || !seen_first(seen, known->utf8, known->utf8_len,
                                                   known->name_hash))
            return 0;
        const unsigned char *text =
            known->secret ? NULL : (const unsigned char *)PyBytes_AS_STRING(value);
        const char *json = twice ? known->json + known->json_len : known->json;
        if (put_member(b, first, json, twice ? known->json2_len : known->json_len,
                       known->utf8, known->utf8_len, text, PyBytes_GET_SIZE(value), 1,
                       twice) < 0)
            return -1;
    }
    if (e->added != Py_None) {
        int done = put_pairs_direct(b, e->added, e, seen, first, twice);
        if (done <= 0) return done;
    }
    if (e->tag != Py_None) return put_pair_direct(b, e->tag, e, seen, first, twice);
    return 1;
}

/* which (REQUEST_HEADERS or RESPONSE_HEADERS) written straight as an object: 1, 0 (nothing
 * is left written: the table must write it), -1 */
static int put_object_direct(Buf *b, PyObject *which, EntryHeaders *e, int twice) {
    Py_ssize_t mark = b->len;
    Seen seen;
    seen.bits = 0;
    seen.count = 0;
    int first = 1;
    if (buf_byte(b, '{') < 0) return -1;
    int done;
    if (which == REQUEST_HEADERS) {
        done = put_pairs_direct(b, e->request, e, &seen, &first, twice);
    } else if (e->response != Py_None) {
        done = put_pairs_direct(b, e->response, e, &seen, &first, twice);
    } else if (e->lines != Py_None) {
        done = put_lines_direct(b, e, &seen, &first, twice);
    } else {
        done = 1; /* no answer's head: {} */
    }
    if (done == 1 && buf_byte(b, '}') < 0) done = -1;
    if (done <= 0) b->len = mark;
    return done;
}

static int put_entry_headers(Buf *b, PyObject *which, EntryHeaders *e, int twice) {
    int direct = put_object_direct(b, which, e, twice);
    if (direct != 0) return direct < 0 ? -1 : 0;
    Headers h;
    headers_init(&h);
    int done;
    if (which == REQUEST_HEADERS) {
        done = add_pairs(&h, e->request, e->verdicts, e->asker);
    } else if (e->response != Py_None) {
        done = add_pairs(&h, e->response, e->verdicts, e->asker);
    } else if (e->lines != Py_None) {
        done = lines_args_ok(e->lines, e->wire, e->verdicts)
                   ? add_lines(&h, e->lines, (WireNames *)e->wire, e->verdicts, e->asker,
                               e->added, e->tag)
                   : -1;
    } else {
        done = 0; /* no answer's head: {} */
    }
    if (done == 0) done = put_headers(b, &h, twice);
    headers_free(&h);
    return done;
}

static int batch_init(EntryBatch *self, PyObject *args, PyObject *kwargs) {
    PyObject *between;
    Py_ssize_t expected = 0;
    int escaped = 0;
    static char *kwlist[] = {"between", "expected", "escaped", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|np", kwlist, &PyBytes_Type, &between,
                                     &expected, &escaped))
        return -1;
    if (self->between != NULL || self->count) {
        PyErr_SetString(PyExc_TypeError, "an EntryBatch is initialised once");
        return -1;
    }
    Py_INCREF(between);
    self->between = between;
    self->expected = expected < 0 ? 0 : expected;
    self->escaped = escaped;
    return 0;
}

static PyObject *batch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    EntryBatch *self = (EntryBatch *)type->tp_alloc(type, 0);
    if (self != NULL) buf_init(&self->buf);
    return (PyObject *)self;
}

static void batch_dealloc(EntryBatch *self) {
    buf_free(&self->buf);
    PyMem_Free(self->starts);
    PyMem_Free(self->ends);
    PyMem_Free(self->at);
    Py_XDECREF(self->between);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int batch_room_for_one_more(EntryBatch *self) {
    if (self->count < self->cap) return 0;
    Py_ssize_t cap = self->cap ? self->cap * 2 : (self->expected > 0 && self->expected < 4096
                                                       ? self->expected
                                                       : 64);
    if (cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double)) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t *starts = PyMem_Realloc(self->starts, sizeof(Py_ssize_t) * (size_t)cap);
    if (starts != NULL) self->starts = starts;
    Py_ssize_t *ends = PyMem_Realloc(self->ends, sizeof(Py_ssize_t) * (size_t)cap);
    if (ends != NULL) self->ends = ends;
    double *at = PyMem_Realloc(self->at, sizeof(double) * (size_t)cap);
    if (at != NULL) self->at = at;
    if (starts == NULL || ends == NULL || at == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->cap = cap;
    return 0;
}

/* Ask for the room the next entry will take (about this one's size) to be in the cache with
 * write intent: between two entries the gateway serves a whole request, which evicts it,
 * and an entry written into lines still in memory stalled on each one (put_rendered ran at
 * under one instruction a cycle). */
static inline void prefetch_next(Buf *b, Py_ssize_t size) {
#if defined(__GNUC__)
    const char *next = b->data + b->len;
    const char *end = b->data + (size < b->cap - b->len ? b->len + size : b->cap);
    for (; next < end; next += 64) __builtin_prefetch(next, 1, 3);
#else
    (void)b;
    (void)size;
#endif
}

/* add(pieces, logged_at, verdicts, asker, request, response, lines, wire, added, tag,
 *     *values): one entry, render's pieces and values, where the value REQUEST_HEADERS is
 * written as pairs_object(request, verdicts, asker) and RESPONSE_HEADERS as
 * pairs_object(response, ...) if response is not None, else as lines_object(lines, wire,
 * verdicts, asker, added, tag) if lines is not None, else {}. The bytes it added (its
 * separator included); on an error, nothing of it is left. */
static PyObject *batch_add(EntryBatch *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 10) {
        PyErr_SetString(PyExc_TypeError,
                        "add(pieces, logged_at, verdicts, asker, request, response, lines, "
                        "wire, added, tag, *values)");
        return NULL;
    }
    if (self->between == NULL) {
        PyErr_SetString(PyExc_TypeError, "EntryBatch() was not initialised");
        return NULL;
    }
    if (self->exports) {
        PyErr_SetString(PyExc_BufferError, "the batch is being read: it takes no more entries");
        return NULL;
    }
    PyObject *pieces = args[0];
    Py_ssize_t count = nargs - 10;
    if (!PyTuple_Check(pieces) || PyTuple_GET_SIZE(pieces) != count + 1) {
        PyErr_SetString(PyExc_ValueError, "pieces must be a tuple of one piece more than values");
        return NULL;
    }
    double logged_at = PyFloat_AsDouble(args[1]);
    if (logged_at == -1.0 && PyErr_Occurred()) return NULL;
    if (!PyDict_Check(args[2]) || !PyList_Check(args[4]) ||
        (args[5] != Py_None && !PyList_Check(args[5]))) {
        PyErr_SetString(PyExc_TypeError,
                        "verdicts must be a dict, request a list, response a list or None");
        return NULL;
    }
    EntryHeaders headers = {args[2], args[3], args[4], args[5], args[6], args[7], args[8], args[9]};
    if (batch_room_for_one_more(self) < 0) return NULL;
    Buf *b = &self->buf;
    Py_ssize_t mark = b->len;
    if (self->count && buf_put(b, PyBytes_AS_STRING(self->between),
                               PyBytes_GET_SIZE(self->between)) < 0)
        goto fail;
    Py_ssize_t start = b->len;
    if (put_rendered(b, &PyTuple_GET_ITEM(pieces, 0), args + 10, count, &headers, self->escaped) < 0)
        goto fail;
    if (self->count == 0 && self->expected > 1) {
        /* the first entry's size says what the batch will take: reserve it now */
        Py_ssize_t each = b->len - start + PyBytes_GET_SIZE(self->between);
        Py_ssize_t want = each > RESERVE_MAX / self->expected ? RESERVE_MAX : each * self->expected;
        want = want > RESERVE_MAX - want / 4 ? RESERVE_MAX : want + want / 4;
        if (want > b->cap - b->len && buf_reserve(b, want) < 0) goto fail;
    }
    self->starts[self->count] = start;
    self->ends[self->count] = b->len;
    self->at[self->count] = logged_at;
    self->count++;
    prefetch_next(b, b->len - mark);
    return PyLong_FromSsize_t(b->len - mark);
fail:
    b->len = mark;
    return NULL;
}

static PyObject *batch_view(EntryBatch *self, PyObject *unused) {
    return PyMemoryView_FromObject((PyObject *)self);
}

static PyObject *batch_lines(EntryBatch *self, PyObject *unused) {
    PyObject *lines = PyList_New(self->count);
    if (lines == NULL) return NULL;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        PyObject *line = PyBytes_FromStringAndSize(self->buf.data + self->starts[i],
                                                   self->ends[i] - self->starts[i]);
        if (line == NULL) {
            Py_DECREF(lines);
            return NULL;
        }
        PyList_SET_ITEM(lines, i, line);
    }
    return lines;
}

static PyObject *batch_logged_at(EntryBatch *self, PyObject *unused) {
    PyObject *times = PyList_New(self->count);
    if (times == NULL) return NULL;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        PyObject *at = PyFloat_FromDouble(self->at[i]);
        if (at == NULL) {
            Py_DECREF(times);
            return NULL;
        }
        PyList_SET_ITEM(times, i, at);
    }
    return times;
}

/* ------------------------------------------------------------------ Kafka record batches */

static RecordEntries batch_entries(EntryBatch *self) {
    RecordEntries e = {self->buf.data, self->starts, self->ends, self->at, self->count};
    return e;
}

/* a record batch's key: bytes or None (key_len -1) */
static int record_key(PyObject *key, const char **data, Py_ssize_t *len) {
    if (key == Py_None) {
        *data = NULL;
        *len = -1;
        return 0;
    }
    if (!PyBytes_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "key must be bytes or None");
        return -1;
    }
    *data = PyBytes_AS_STRING(key);
    *len = PyBytes_GET_SIZE(key);
    return 0;
}

/* record_extent(key, start, max_bytes): (size, end) of the record batch from start */
static PyObject *batch_record_extent(EntryBatch *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record_extent(key, start, max_bytes)");
        return NULL;
    }
    const char *key;
    Py_ssize_t key_len, size, end;
    if (record_key(args[0], &key, &key_len) < 0) return NULL;
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t max_bytes = PyLong_AsSsize_t(args[2]);
    if (max_bytes == -1 && PyErr_Occurred()) return NULL;
    RecordEntries e = batch_entries(self);
    if (record_extent(&e, key_len, start, max_bytes, &size, &end) < 0) return NULL;
    return Py_BuildValue("(nn)", size, end);
}

/* record_batch(prefix, key, start, end): prefix, then the record batch of start..end */
static PyObject *batch_record_batch(EntryBatch *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "record_batch(prefix: bytes, key, start, end)");
        return NULL;
    }
    const char *key;
    Py_ssize_t key_len;
    if (record_key(args[1], &key, &key_len) < 0) return NULL;
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t end = PyLong_AsSsize_t(args[3]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    RecordEntries e = batch_entries(self);
    return record_batch(&e, PyBytes_AS_STRING(args[0]), PyBytes_GET_SIZE(args[0]), key, key_len,
                        start, end);
}

/* stamped(): stamped_lines(self.lines(), self.logged_at()), from the buffer itself */
static PyObject *batch_stamped(EntryBatch *self, PyObject *unused) {
    Py_ssize_t room = 64;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        Py_ssize_t size = self->ends[i] - self->starts[i];
        if (size > (PY_SSIZE_T_MAX - room) / 2 - 64) return PyErr_NoMemory();
        room += stamped_room(size);
    }
    Buf b;
    if (buf_init_owned(&b, room) < 0) return NULL;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        if (put_stamped(&b, i, self->buf.data + self->starts[i], self->ends[i] - self->starts[i],
                        self->at[i], self->escaped) < 0) {
            buf_free(&b);
            return NULL;
        }
    }
    return bytes_of(&b);
}

static Py_ssize_t batch_length(EntryBatch *self) { return self->count; }

static int batch_getbuffer(EntryBatch *self, Py_buffer *view, int flags) {
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->buf.data, self->buf.len, 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void batch_releasebuffer(EntryBatch *self, Py_buffer *view) { self->exports--; }

static PyMethodDef BATCH_METHODS[] = {
    {"add", (PyCFunction)(void (*)(void))batch_add, METH_FASTCALL,
     "add(pieces, logged_at, verdicts, asker, request, response, lines, wire, added, tag, "
     "*values): write one entry; the bytes it added."},
    {"view", (PyCFunction)batch_view, METH_NOARGS,
     "view(): the entries, joined by between, as a read-only memoryview (no copy)."},
    {"lines", (PyCFunction)batch_lines, METH_NOARGS, "lines(): each entry as bytes."},
    {"logged_at", (PyCFunction)batch_logged_at, METH_NOARGS,
     "logged_at(): when each entry was logged (epoch seconds)."},
    {"record_extent", (PyCFunction)(void (*)(void))batch_record_extent, METH_FASTCALL,
     "record_extent(key, start, max_bytes): (size, end) of the Kafka record batch of the "
     "entries from start, as many as fit in max_bytes (at least one)."},
    {"record_batch", (PyCFunction)(void (*)(void))batch_record_batch, METH_FASTCALL,
     "record_batch(prefix, key, start, end): prefix, then the Kafka record batch of entries "
     "start to end, as one bytes object."},
    {"stamped", (PyCFunction)batch_stamped, METH_NOARGS,
     "stamped(): stamped_lines(self.lines(), self.logged_at())."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods BATCH_SEQUENCE = {.sq_length = (lenfunc)batch_length};

static PyBufferProcs BATCH_BUFFER = {
    .bf_getbuffer = (getbufferproc)batch_getbuffer,
    .bf_releasebuffer = (releasebufferproc)batch_releasebuffer,
};

static PyTypeObject EntryBatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "portico.gateway.telemetry.jsonline.EntryBatch",
    .tp_basicsize = sizeof(EntryBatch),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "EntryBatch(between, expected=0, escaped=False): a logger's batch of entries in "
              "one buffer.",
    .tp_new = batch_new,
    .tp_init = (initproc)batch_init,
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_as_sequence = &BATCH_SEQUENCE,
    .tp_as_buffer = &BATCH_BUFFER,
    .tp_methods = BATCH_METHODS,
};

/* ------------------------------------------------------------------ the module */

static PyMethodDef METHODS[] = {
    {"render", (PyCFunction)(void (*)(void))render, METH_FASTCALL,
     "render(pieces, values): the pieces with each value written as JSON between them."},
    {"pairs_object", (PyCFunction)(void (*)(void))pairs_object, METH_FASTCALL,
     "pairs_object(pairs, verdicts, asker): headers as a JSON object."},
    {"lines_object", (PyCFunction)(void (*)(void))lines_object, METH_FASTCALL,
     "lines_object(lines, wire, verdicts, asker, added, tag): a relayed head as a "
     "JSON object (wire: a WireNames)."},
    {"stamped_lines", (PyCFunction)(void (*)(void))stamped_lines, METH_FASTCALL,
     "stamped_lines(lines, logged_at): each line as a JSON string beside its time in "
     "nanoseconds, as JSON arrays joined by commas."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "portico.gateway.telemetry.jsonline",
    "JSON texts written straight from a logger's values (see jsonline.py).", -1, METHODS,
};

PyMODINIT_FUNC PyInit_jsonline(void) {
    escaped_init();
    record_crc_init();
    SECRET = PyUnicode_InternFromString("secret");
    WIRE_NAME = PyUnicode_InternFromString("wire_name");
    if (SECRET == NULL || WIRE_NAME == NULL) return NULL;
    if (PyType_Ready(&WireNamesType) < 0 || PyType_Ready(&EntryBatchType) < 0) return NULL;
    /* plain objects, told apart by identity */
    REQUEST_HEADERS = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    RESPONSE_HEADERS = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (REQUEST_HEADERS == NULL || RESPONSE_HEADERS == NULL) return NULL;
    PyObject *module = PyModule_Create(&MODULE);
    if (module == NULL) return NULL;
    Py_INCREF(&EntryBatchType);
    if (PyModule_AddObject(module, "EntryBatch", (PyObject *)&EntryBatchType) < 0) {
        Py_DECREF(&EntryBatchType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(REQUEST_HEADERS);
    Py_INCREF(RESPONSE_HEADERS);
    if (PyModule_AddObject(module, "REQUEST_HEADERS", REQUEST_HEADERS) < 0 ||
        PyModule_AddObject(module, "RESPONSE_HEADERS", RESPONSE_HEADERS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&WireNamesType);
    if (PyModule_AddObject(module, "WireNames", (PyObject *)&WireNamesType) < 0) {
        Py_DECREF(&WireNamesType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "REDACTED", "[REDACTED]") < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
