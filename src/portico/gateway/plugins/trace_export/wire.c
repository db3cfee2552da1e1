/* portico.gateway.plugins.trace_export.wire in C: the same functions, the same results, as
 * wire.py (read its docstring first: it is the reference, and
 * tests/gateway/plugins/test_trace_export_wire.py checks that both write the same bytes for
 * the same input and refuse the same bad arguments with the same exceptions).
 *
 * Why C: a request's span written from compiled Python (an object at request time, its
 * attribute list and ~20 small bytes joined at export) cost ~15,000 instructions a request
 * (callgrind, bench/bench_instructions.py), most of trace-export's cost on the gateway; the
 * work itself, ~300 bytes copied from a dozen strings, is a few hundred. Each function sizes
 * its message first, then writes it straight into the bytes or str it returns. Nothing here
 * keeps state; references are held only for the call.
 *
 * Built by scripts/build_native.py beside the mypyc modules; used while that build is current.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* each byte's two lower-case hex digits: a byte is written with one 2-byte copy */
static const char HEX_PAIRS[513] =
    "000102030405060708090a0b0c0d0e0f"
    "101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f"
    "303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f"
    "505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f"
    "707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f"
    "909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
    "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
    "d0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeef"
    "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
/* each byte's value as a lower-case hex digit, -1 for any other (upper-case is not valid in
 * a traceparent) */
static const signed char HEX_VALUE[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
     0,  1,  2,  3,  4,  5,  6,  7,  8,  9, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

#if defined(__GNUC__)
#define ALWAYS_INLINE __attribute__((always_inline))
#else
#define ALWAYS_INLINE
#endif

/* PyUnicode_READY: needed up to 3.11, a deprecated no-op from 3.12 (-Werror) */
#if PY_VERSION_HEX < 0x030C0000
#define TEXT_READY(op) PyUnicode_READY(op)
#else
#define TEXT_READY(op) 0
#endif

/* the end of a message written into `out` must be where its size said: a mismatch is a bug
 * here (the bytes returned would hold garbage), reported rather than returned */
static PyObject *checked_end(PyObject *out, const char *at) {
    if (at != PyBytes_AS_STRING(out) + PyBytes_GET_SIZE(out)) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_SystemError, "wire: a message's size was miscounted");
        return NULL;
    }
    return out;
}

/* ------------------------------------------------------------------ protobuf pieces */

static inline Py_ssize_t varint_size(uint64_t value) {
    Py_ssize_t size = 1;
    while (value >= 0x80) {
        value >>= 7;
        size++;
    }
    return size;
}

static inline char *put_varint(char *out, uint64_t value) {
    while (value >= 0x80) {
        *out++ = (char)((value & 0x7F) | 0x80);
        value >>= 7;
    }
    *out++ = (char)value;
    return out;
}

/* a length-delimited field of a payload of `size` bytes, its one-byte tag included */
static inline Py_ssize_t field_size(Py_ssize_t size) {
    return 1 + varint_size((uint64_t)size) + size;
}

/* `size` bytes copied: a span's strings are mostly short, and a call of memcpy costs more
 * than their copy (up to 16 bytes: two copies of a fixed size, overlapping, each one move) */
ALWAYS_INLINE static inline void copy(char *out, const char *data, Py_ssize_t size) {
    if (size > 16) {
        memcpy(out, data, (size_t)size);
    } else if (size >= 8) {
        uint64_t head, tail;
        memcpy(&head, data, 8);
        memcpy(&tail, data + size - 8, 8);
        memcpy(out, &head, 8);
        memcpy(out + size - 8, &tail, 8);
    } else if (size >= 4) {
        uint32_t head, tail;
        memcpy(&head, data, 4);
        memcpy(&tail, data + size - 4, 4);
        memcpy(out, &head, 4);
        memcpy(out + size - 4, &tail, 4);
    } else {
        for (Py_ssize_t i = 0; i < size; i++) out[i] = data[i];
    }
}

ALWAYS_INLINE static inline char *put_field(char *out, unsigned char tag, const char *data,
                                            Py_ssize_t size) {
    *out++ = (char)tag;
    out = put_varint(out, (uint64_t)size);
    copy(out, data, size);
    return out + size;
}

/* a fixed64, little-endian (the shifts compile to one store on a little-endian machine) */
static inline char *put_fixed64(char *out, uint64_t value) {
    unsigned char bytes[8] = {
        (unsigned char)value,         (unsigned char)(value >> 8),
        (unsigned char)(value >> 16), (unsigned char)(value >> 24),
        (unsigned char)(value >> 32), (unsigned char)(value >> 40),
        (unsigned char)(value >> 48), (unsigned char)(value >> 56),
    };
    memcpy(out, bytes, 8);
    return out + 8;
}

/* a str's UTF-8 text (TypeError naming `what` if `value` is not a str) */
static int utf8_of(PyObject *value, const char *what, const char **text, Py_ssize_t *size) {
    if (!PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str", what);
        return -1;
    }
    *text = PyUnicode_AsUTF8AndSize(value, size);
    return *text == NULL ? -1 : 0;
}

static inline int hex_value(Py_UCS1 c) { return HEX_VALUE[c]; }

/* 8 bytes as an integer, little- and big-endian (each compiles to one load, and a byte swap) */
static inline uint64_t load_le64(const unsigned char *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline uint64_t load_be64(const unsigned char *p) {
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* 4 bytes from 8 lower-case hex digits, read 8 at a time (the first digit in the lowest byte
 * of `x`); -1 if one is not a digit. A byte table costs ~12 instructions a byte, this ~4.
 * For each byte c (below 0x80, checked first, so that no sum or difference crosses into the
 * next byte): c + (0x80 - lo) has its high bit set when c >= lo, (0x80 + hi) - c when
 * c <= hi. A digit's value is its low nibble, a letter's (a-f: 1-6) that plus 9. */
ALWAYS_INLINE static inline int unhex8(uint64_t x, unsigned char *out) {
    if (x & HIGHS) return -1;
    uint64_t digit = (x + (0x80 - '0') * ONES) & ((0x80 + '9') * ONES - x) & HIGHS;
    uint64_t letter = (x + (0x80 - 'a') * ONES) & ((0x80 + 'f') * ONES - x) & HIGHS;
    if ((digit | letter) != HIGHS) return -1;
    uint64_t nibbles = (x & 0x0F * ONES) + (letter >> 7) * 9;
    /* byte 2k: nibble 2k, then 2k + 1; then those four bytes side by side */
    uint64_t pairs = (nibbles << 4 | nibbles >> 8) & 0x00FF00FF00FF00FFULL;
    pairs = (pairs | pairs >> 8) & 0x0000FFFF0000FFFFULL;
    pairs = (pairs | pairs >> 16) & 0xFFFFFFFFULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t found = (uint32_t)pairs; /* (its bytes in memory order: one store) */
    memcpy(out, &found, 4);
#else
    out[0] = (unsigned char)pairs;
    out[1] = (unsigned char)(pairs >> 8);
    out[2] = (unsigned char)(pairs >> 16);
    out[3] = (unsigned char)(pairs >> 24);
#endif
    return 0;
}

/* `count` bytes (a multiple of 4) from 2 * count lower-case hex digits at `text`; -1 if one
 * is not */
ALWAYS_INLINE static inline int unhex(const Py_UCS1 *text, Py_ssize_t count, unsigned char *out) {
    int bad = 0;
    for (Py_ssize_t i = 0; i < count; i += 4) bad |= unhex8(load_le64(text + 2 * i), out + i);
    return bad;
}

static inline char *put_hex(char *out, const unsigned char *data, int count) {
    for (int i = 0; i < count; i++) {
        memcpy(out, HEX_PAIRS + 2 * data[i], 2);
        out += 2;
    }
    return out;
}

/* a str's UTF-8 text, read in place for an ASCII one (most are: no call) */
static inline const char *text_of(PyObject *value, Py_ssize_t *size) {
    if (PyUnicode_IS_COMPACT_ASCII(value)) {
        *size = PyUnicode_GET_LENGTH(value);
        return (const char *)PyUnicode_DATA(value);
    }
    return PyUnicode_AsUTF8AndSize(value, size);
}

/* ------------------------------------------------------------------ traceparents */

/* traceparents(randomness, bound) */
static PyObject *traceparents(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "traceparents(randomness: bytes, bound: int)");
        return NULL;
    }
    PyObject *randomness = args[0], *bound = args[1];
    if (!PyBytes_Check(randomness)) {
        PyErr_SetString(PyExc_TypeError, "randomness must be bytes");
        return NULL;
    }
    if (!PyLong_Check(bound)) {
        PyErr_SetString(PyExc_TypeError, "bound must be an int");
        return NULL;
    }
    Py_ssize_t size = PyBytes_GET_SIZE(randomness);
    if (size % 24) {
        PyErr_SetString(PyExc_ValueError, "randomness comes 24 bytes to a traceparent");
        return NULL;
    }
    int every = 0;
    uint64_t limit = PyLong_AsUnsignedLongLong(bound);
    if (limit == (uint64_t)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
        PyErr_Clear();  /* negative, or above 2**64 - 1: only 2**64 itself is a bound */
        /* (made here, once per DRAWN requests of a ratio of 1, not kept: no module state) */
        PyObject *two_64 = PyLong_FromString("18446744073709551616", NULL, 10);
        if (two_64 == NULL) return NULL;
        int equal = PyObject_RichCompareBool(bound, two_64, Py_EQ);
        Py_DECREF(two_64);
        if (equal < 0) return NULL;
        if (!equal) {
            PyErr_SetString(PyExc_ValueError, "bound must be from 0 to 2**64");
            return NULL;
        }
        every = 1;
    }
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(randomness);
    Py_ssize_t count = size / 24;
    PyObject *found = PyList_New(count);
    if (found == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        unsigned char id[24];
        memcpy(id, data + 24 * i, 24);
        uint64_t high = load_be64(id), low = load_be64(id + 8);
        if ((high | low) == 0) {
            id[15] = 1;
            low = 1;
        }
        if (load_be64(id + 16) == 0) id[23] = 1;
        int sampled = every || low < limit;
        PyObject *text = PyUnicode_New(55, 127);
        if (text == NULL) {
            Py_DECREF(found);
            return NULL;
        }
        char *out = (char *)PyUnicode_1BYTE_DATA(text);
        memcpy(out, "00-", 3);
        out = put_hex(out + 3, id, 16);
        *out++ = '-';
        out = put_hex(out, id + 16, 8);
        memcpy(out, sampled ? "-01" : "-00", 3);
        PyList_SET_ITEM(found, i, text);
    }
    return found;
}

/* ------------------------------------------------------------------ span */

/* a span attribute: a KeyValue whose AnyValue is a string (text) or an int64 (number) */
typedef struct {
    const char *key;
    Py_ssize_t key_size;
    const char *text; /* NULL: the number */
    Py_ssize_t text_size;
    uint64_t number;
    Py_ssize_t any_size;  /* the AnyValue's payload */
    Py_ssize_t pair_size; /* the KeyValue's */
} Attribute;

ALWAYS_INLINE static inline void attribute_sized(Attribute *a) {
    a->any_size = a->text != NULL ? field_size(a->text_size) : 1 + varint_size(a->number);
    a->pair_size = field_size(a->key_size) + field_size(a->any_size);
}

ALWAYS_INLINE static inline void set_text(Attribute *a, const char *key, Py_ssize_t key_size,
                                         const char *text, Py_ssize_t size) {
    a->key = key;
    a->key_size = key_size;
    a->text = text;
    a->text_size = size;
    attribute_sized(a);
}

/* (a key's size known when compiled: a literal's) */
#define SET_TEXT(a, key, text, size) set_text((a), key, (Py_ssize_t)(sizeof(key) - 1), (text), (size))
ALWAYS_INLINE static inline char *put_attribute(char *out, const Attribute *a) {
    *out++ = 0x4A; /* Span.attributes = 9 */
    out = put_varint(out, (uint64_t)a->pair_size);
    out = put_field(out, 0x0A, a->key, a->key_size); /* KeyValue.key = 1 */
    *out++ = 0x12;                                   /* KeyValue.value = 2 */
    out = put_varint(out, (uint64_t)a->any_size);
    if (a->text != NULL) return put_field(out, 0x0A, a->text, a->text_size); /* string = 1 */
    *out++ = 0x18;                                                          /* int = 3 */
    return put_varint(out, a->number);
}

/* whether semconv names the method as it is (CONNECT, DELETE, GET, HEAD, OPTIONS, PATCH, POST,
 * PUT, TRACE) */
static int known_method(const char *method, Py_ssize_t size) {
    switch (size) {
    case 3:
        return memcmp(method, "GET", 3) == 0 || memcmp(method, "PUT", 3) == 0;
    case 4:
        return memcmp(method, "POST", 4) == 0 || memcmp(method, "HEAD", 4) == 0;
    case 5:
        return memcmp(method, "PATCH", 5) == 0 || memcmp(method, "TRACE", 5) == 0;
    case 6:
        return memcmp(method, "DELETE", 6) == 0;
    case 7:
        return memcmp(method, "OPTIONS", 7) == 0 || memcmp(method, "CONNECT", 7) == 0;
    default:
        return 0;
    }
}

static int u64_of(PyObject *value, const char *what, uint64_t *out) {
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", what);
        return -1;
    }
    /* (as a signed value first: PyLong_AsUnsignedLongLong takes a slow path, ~200
     * instructions, for a time's three digits) */
    int overflow;
    long long signed_value = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (signed_value == -1 && PyErr_Occurred()) return -1;
    if (overflow == 0 && signed_value >= 0) {
        *out = (uint64_t)signed_value;
        return 0;
    }
    if (overflow > 0) { /* from 2**63 */
        *out = PyLong_AsUnsignedLongLong(value);
        if (*out != (uint64_t)-1 || !PyErr_Occurred()) return 0;
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
    }
    PyErr_Format(PyExc_OverflowError, "%s must be from 0 to 2**64 - 1", what);
    return -1;
}

/* the fixed attributes at most: method, scheme, route, server and client addresses,
 * protocol version, status code, user agent, original method, path */
#define FIXED_ATTRIBUTES 10
/* extra attributes held on the stack; more are allocated */
#define STACK_ATTRIBUTES 48

/* span(traceparent, parent_span_id, trace_state, start_ns, end_ns, method, path, scheme,
 *      route, host, client, version, status, agent, extra) */
static PyObject *span(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 15) {
        PyErr_SetString(PyExc_TypeError,
                        "span(traceparent, parent_span_id, trace_state, start_ns, end_ns, "
                        "method, path, scheme, route, host, client, version, status, agent, "
                        "extra)");
        return NULL;
    }
    unsigned char ids[16 + 8 + 8]; /* trace id, span id, parent span id */
    PyObject *traceparent = args[0], *parent = args[1];
    if (!PyUnicode_Check(traceparent)) {
        PyErr_SetString(PyExc_TypeError, "traceparent must be a str");
        return NULL;
    }
    if (TEXT_READY(traceparent) < 0) return NULL;
    const Py_UCS1 *tp = PyUnicode_1BYTE_DATA(traceparent);
    if (PyUnicode_GET_LENGTH(traceparent) != 55 ||
        PyUnicode_KIND(traceparent) != PyUnicode_1BYTE_KIND || tp[0] != '0' || tp[1] != '0' ||
        tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || unhex(tp + 3, 16, ids) < 0 ||
        unhex(tp + 36, 8, ids + 16) < 0 || hex_value(tp[53]) < 0 || hex_value(tp[54]) < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "not a traceparent: 00-<32 hex>-<16 hex>-<2 hex>, lower-case");
        return NULL;
    }
    if (!PyUnicode_Check(parent)) {
        PyErr_SetString(PyExc_TypeError, "parent_span_id must be a str");
        return NULL;
    }
    if (TEXT_READY(parent) < 0) return NULL;
    Py_ssize_t parent_size = PyUnicode_GET_LENGTH(parent);
    if (parent_size != 0 &&
        (parent_size != 16 || PyUnicode_KIND(parent) != PyUnicode_1BYTE_KIND ||
         unhex(PyUnicode_1BYTE_DATA(parent), 8, ids + 24) < 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "parent_span_id must be 16 lower-case hex digits or empty");
        return NULL;
    }
    if (!PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "trace_state must be a str");
        return NULL;
    }
    uint64_t start_ns, end_ns;
    if (u64_of(args[3], "start_ns", &start_ns) < 0 || u64_of(args[4], "end_ns", &end_ns) < 0)
        return NULL;
    static const char *const NAMES[] = {"method", "path", "scheme", "route",
                                        "host", "client", "version"};
    for (int i = 0; i < 7; i++) {
        if (!PyUnicode_Check(args[5 + i])) {
            PyErr_Format(PyExc_TypeError, "%s must be a str", NAMES[i]);
            return NULL;
        }
    }
    PyObject *status = args[12], *agent = args[13], *extra = args[14];
    if (!PyLong_Check(status)) {
        PyErr_SetString(PyExc_TypeError, "status must be an int");
        return NULL;
    }
    if (agent != Py_None && !PyUnicode_Check(agent)) {
        PyErr_SetString(PyExc_TypeError, "agent must be a str");
        return NULL;
    }
    Py_ssize_t extra_count = 0;
    PyObject **extra_items = NULL;
    if (extra != Py_None) {
        if (PyList_Check(extra)) {
            extra_count = PyList_GET_SIZE(extra);
            extra_items = ((PyListObject *)extra)->ob_item;
        } else if (PyTuple_Check(extra)) {
            extra_count = PyTuple_GET_SIZE(extra);
            extra_items = ((PyTupleObject *)extra)->ob_item;
        } else {
            PyErr_SetString(PyExc_TypeError, "extra must be a list of (key, value) or None");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < extra_count; i++) {
        PyObject *item = extra_items[i];
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "extra must hold (key, value) tuples");
            return NULL;
        }
        if (!PyUnicode_Check(PyTuple_GET_ITEM(item, 0))) {
            PyErr_SetString(PyExc_TypeError, "an attribute's key must be a str");
            return NULL;
        }
        PyObject *value = PyTuple_GET_ITEM(item, 1);
        if (!PyUnicode_Check(value) && !PyLong_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "an attribute's value must be a str or an int");
            return NULL;
        }
    }
    int overflow;
    long long status_value = PyLong_AsLongLongAndOverflow(status, &overflow);
    if (status_value == -1 && PyErr_Occurred()) return NULL;
    int has_status = overflow != 0 || status_value != 0;
    int error = overflow > 0 || (overflow == 0 && status_value >= 500);

    /* the texts (UTF-8) */
    const char *text[8];
    Py_ssize_t size[8];
    for (int i = 0; i < 8; i++) { /* trace_state, then method ... version */
        PyObject *value = i == 0 ? args[2] : args[4 + i];
        text[i] = text_of(value, &size[i]);
        if (text[i] == NULL) return NULL;
    }
    const char *state = text[0], *method = text[1], *path = text[2], *scheme = text[3];
    const char *route = text[4], *host = text[5], *client = text[6], *version = text[7];
    Py_ssize_t state_size = size[0], method_size = size[1], route_size = size[4];
    int known = known_method(method, method_size);

    Attribute stack[FIXED_ATTRIBUTES + STACK_ATTRIBUTES];
    Attribute *attributes = stack;
    Py_ssize_t total = FIXED_ATTRIBUTES + extra_count;
    if (extra_count > STACK_ATTRIBUTES) {
        attributes = PyMem_New(Attribute, (size_t)total);
        if (attributes == NULL) return PyErr_NoMemory();
    }
    PyObject *out = NULL;
    Py_ssize_t n = 0;
    if (known)
        SET_TEXT(&attributes[n++], "http.request.method", method, method_size);
    else
        SET_TEXT(&attributes[n++], "http.request.method", "_OTHER", 6);
    SET_TEXT(&attributes[n++], "url.scheme", scheme, size[3]);
    SET_TEXT(&attributes[n++], "http.route", route, route_size);
    SET_TEXT(&attributes[n++], "server.address", host, size[5]);
    SET_TEXT(&attributes[n++], "client.address", client, size[6]);
    SET_TEXT(&attributes[n++], "network.protocol.version", version, size[7]);
    if (has_status) {
        Attribute *a = &attributes[n++];
        a->key = "http.response.status_code";
        a->key_size = (Py_ssize_t)(sizeof "http.response.status_code" - 1);
        a->text = NULL;
        a->number = PyLong_AsUnsignedLongLongMask(status);
        attribute_sized(a);
    }
    if (agent != Py_None) {
        const char *agent_text;
        Py_ssize_t agent_size;
        agent_text = text_of(agent, &agent_size); /* (a str: checked above) */
        if (agent_text == NULL) goto done;
        SET_TEXT(&attributes[n++], "user_agent.original", agent_text, agent_size);
    }
    if (!known) SET_TEXT(&attributes[n++], "http.request.method_original", method, method_size);
    SET_TEXT(&attributes[n++], "url.path", path, size[2]);
    for (Py_ssize_t i = 0; i < extra_count; i++) {
        PyObject *key = PyTuple_GET_ITEM(extra_items[i], 0);
        PyObject *value = PyTuple_GET_ITEM(extra_items[i], 1);
        Attribute *a = &attributes[n++];
        a->key = text_of(key, &a->key_size);
        if (a->key == NULL) goto done;
        if (PyLong_Check(value)) {
            a->text = NULL;
            a->number = PyLong_AsUnsignedLongLongMask(value);
            if (a->number == (uint64_t)-1 && PyErr_Occurred()) goto done;
        } else {
            a->text = text_of(value, &a->text_size);
            if (a->text == NULL) goto done;
        }
        attribute_sized(a);
    }

    /* the span's size: ids, trace state, parent, name, kind, times, attributes, status,
     * flags */
    Py_ssize_t name_size = (known ? method_size : 4) + 1 + route_size;
    Py_ssize_t body = 18 + 10 + (state_size ? field_size(state_size) : 0);
    body += (parent_size ? 10 : 0) + field_size(name_size) + 2 + 9 + 9;
    for (Py_ssize_t i = 0; i < n; i++) body += field_size(attributes[i].pair_size);
    body += (error ? 4 : 0) + 6;
    out = PyBytes_FromStringAndSize(NULL, field_size(body));
    if (out == NULL) goto done;
    char *at = PyBytes_AS_STRING(out);
    *at++ = 0x12; /* ScopeSpans.spans = 2 */
    at = put_varint(at, (uint64_t)body);
    at = put_field(at, 0x0A, (const char *)ids, 16); /* Span.trace_id = 1 */
    at = put_field(at, 0x12, (const char *)ids + 16, 8); /* .span_id = 2 */
    if (state_size) at = put_field(at, 0x1A, state, state_size); /* .trace_state = 3 */
    if (parent_size) at = put_field(at, 0x22, (const char *)ids + 24, 8); /* .parent = 4 */
    *at++ = 0x2A; /* .name = 5 */
    at = put_varint(at, (uint64_t)name_size);
    if (known) {
        copy(at, method, method_size);
        at += method_size;
    } else {
        memcpy(at, "HTTP", 4);
        at += 4;
    }
    *at++ = ' ';
    copy(at, route, route_size);
    at += route_size;
    *at++ = 0x30; /* .kind = 6: SPAN_KIND_SERVER */
    *at++ = 0x02;
    *at++ = 0x39; /* .start_time_unix_nano = 7 (fixed64) */
    at = put_fixed64(at, start_ns);
    *at++ = 0x41; /* .end_time_unix_nano = 8 (fixed64) */
    at = put_fixed64(at, end_ns);
    for (Py_ssize_t i = 0; i < n; i++) at = put_attribute(at, &attributes[i]);
    if (error) { /* .status = 15: Status.code = 3, STATUS_CODE_ERROR */
        memcpy(at, "\x7A\x02\x18\x02", 4);
        at += 4;
    }
    memcpy(at, "\x85\x01\x01\x00\x00\x00", 6); /* .flags = 16 (fixed32): sampled */
    out = checked_end(out, at + 6);
done:
    if (attributes != stack) PyMem_Free(attributes);
    return out;
}

/* ------------------------------------------------------------------ export_request */

/* export_request(service_name, scope, spans) */
static PyObject *export_request(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "export_request(service_name: str, scope: str, spans: list[bytes])");
        return NULL;
    }
    const char *service, *scope;
    Py_ssize_t service_size, scope_size;
    if (!PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "service_name must be a str");
        return NULL;
    }
    if (!PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "scope must be a str");
        return NULL;
    }
    PyObject *spans = args[2];
    PyObject **items;
    Py_ssize_t count;
    if (PyList_Check(spans)) {
        count = PyList_GET_SIZE(spans);
        items = ((PyListObject *)spans)->ob_item;
    } else if (PyTuple_Check(spans)) {
        count = PyTuple_GET_SIZE(spans);
        items = ((PyTupleObject *)spans)->ob_item;
    } else {
        PyErr_SetString(PyExc_TypeError, "spans must be a list of bytes");
        return NULL;
    }
    Py_ssize_t spans_size = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_SetString(PyExc_TypeError, "spans must be a list of bytes");
            return NULL;
        }
        spans_size += PyBytes_GET_SIZE(items[i]);
    }
    if (utf8_of(args[0], "service_name", &service, &service_size) < 0 ||
        utf8_of(args[1], "scope", &scope, &scope_size) < 0)
        return NULL;
    /* Resource{attributes: KeyValue{key: "service.name", value: AnyValue{string}}} */
    Py_ssize_t any_value = field_size(service_size);
    Py_ssize_t pair = field_size(12) + field_size(any_value);
    Py_ssize_t resource = field_size(pair);
    /* ScopeSpans{scope: InstrumentationScope{name}, spans (framed already)} */
    Py_ssize_t scope_message = field_size(scope_size);
    Py_ssize_t scope_spans = field_size(scope_message) + spans_size;
    Py_ssize_t resource_spans = field_size(resource) + field_size(scope_spans);
    PyObject *out = PyBytes_FromStringAndSize(NULL, field_size(resource_spans));
    if (out == NULL) return NULL;
    char *at = PyBytes_AS_STRING(out);
    *at++ = 0x0A; /* ExportTraceServiceRequest.resource_spans = 1 */
    at = put_varint(at, (uint64_t)resource_spans);
    *at++ = 0x0A; /* ResourceSpans.resource = 1 */
    at = put_varint(at, (uint64_t)resource);
    *at++ = 0x0A; /* Resource.attributes = 1 */
    at = put_varint(at, (uint64_t)pair);
    at = put_field(at, 0x0A, "service.name", 12); /* KeyValue.key = 1 */
    *at++ = 0x12;                                  /* KeyValue.value = 2 */
    at = put_varint(at, (uint64_t)any_value);
    at = put_field(at, 0x0A, service, service_size); /* AnyValue.string_value = 1 */
    *at++ = 0x12;                                    /* ResourceSpans.scope_spans = 2 */
    at = put_varint(at, (uint64_t)scope_spans);
    *at++ = 0x0A; /* ScopeSpans.scope = 1 */
    at = put_varint(at, (uint64_t)scope_message);
    at = put_field(at, 0x0A, scope, scope_size); /* InstrumentationScope.name = 1 */
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t size = PyBytes_GET_SIZE(items[i]);
        memcpy(at, PyBytes_AS_STRING(items[i]), (size_t)size);
        at += size;
    }
    return checked_end(out, at);
}

/* ------------------------------------------------------------------ the module */

static PyMethodDef METHODS[] = {
    {"traceparents", (PyCFunction)(void (*)(void))traceparents, METH_FASTCALL,
     "traceparents(randomness, bound): the traceparent values of new traces."},
    {"span", (PyCFunction)(void (*)(void))span, METH_FASTCALL,
     "span(traceparent, parent_span_id, trace_state, start_ns, end_ns, method, path, scheme, "
     "route, host, client, version, status, agent, extra): a SERVER span, framed."},
    {"export_request", (PyCFunction)(void (*)(void))export_request, METH_FASTCALL,
     "export_request(service_name, scope, spans): an OTLP/HTTP traces request's body."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "portico.gateway.plugins.trace_export.wire",
    "What trace-export writes: W3C traceparent values and OTLP protobuf (see wire.py).", -1,
    METHODS,
};

PyMODINIT_FUNC PyInit_wire(void) { return PyModule_Create(&MODULE); }
