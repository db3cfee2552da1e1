/* portico.gateway.telemetry.recordbatch in C: the same function, the same bytes, as
 * recordbatch.py (read its docstring first: it is the reference, aiokafka's own builder, and
 * tests/gateway/test_recordbatch.py checks that both write the same bytes for the same input,
 * which aiokafka reads back with their CRC checked).
 *
 * Why C: stream-logger's batches went through aiokafka's builder at ~7,700 instructions an
 * entry (callgrind, bench/bench_instructions.py): a record appended at a time into a buffer
 * grown by reallocation, then a CRC-32C a byte at a time over the whole batch. Here a batch
 * is sized first, written once into a bytes object of its size, and its CRC-32C computed
 * eight bytes an instruction where the CPU has SSE 4.2.
 *
 * Built by scripts/build_native.py beside the mypyc modules; used while that build is current.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ CRC-32C (Castagnoli) */

static uint32_t CRC_TABLE[256];

static void crc_table_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        CRC_TABLE[i] = c;
    }
}

static uint32_t crc32c_table(uint32_t crc, const unsigned char *p, size_t n) {
    while (n--) crc = CRC_TABLE[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc,
                                                               const unsigned char *p,
                                                               size_t n) {
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
    }
    uint32_t c32 = (uint32_t)c;
    for (; n; n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

static int HAS_SSE42 = 0;

static uint32_t crc32c(const unsigned char *p, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (HAS_SSE42) return ~crc32c_sse42(0xFFFFFFFFu, p, n);
#endif
    return ~crc32c_table(0xFFFFFFFFu, p, n);
}

/* ------------------------------------------------------------------ varints, big-endian */

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static inline int varint_size(int64_t v) {
    uint64_t bits = zigzag(v);
    int size = 1;
    while (bits >= 0x80) {
        bits >>= 7;
        size++;
    }
    return size;
}

static inline unsigned char *put_varint(unsigned char *out, int64_t v) {
    uint64_t bits = zigzag(v);
    while (bits >= 0x80) {
        *out++ = (unsigned char)((bits & 0x7F) | 0x80);
        bits >>= 7;
    }
    *out++ = (unsigned char)bits;
    return out;
}

static inline unsigned char *put_be(unsigned char *out, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) out[bytes - 1 - i] = (unsigned char)(v >> (8 * i));
    return out + bytes;
}

/* ------------------------------------------------------------------ the batch */

#define HEADER_SIZE 61
#define AFTER_LENGTH 12
#define CRC_AT 17
#define ATTRIBUTES_AT 21

/* a record's body (from its attributes to its headers' count) and its length's varint */
static inline Py_ssize_t body_size(int64_t delta, Py_ssize_t offset, Py_ssize_t key_len,
                                   Py_ssize_t value_len) {
    return 1 + varint_size(delta) + varint_size(offset) +
           (key_len < 0 ? 1 : varint_size(key_len) + key_len) + varint_size(value_len) +
           value_len + 1;
}

/* the stamp of logged_at[i]: int(seconds * 1000), as the reference; -1 with an error set */
static int stamp_of(PyObject *logged_at, Py_ssize_t i, int64_t *stamp) {
    PyObject *at = PyList_GET_ITEM(logged_at, i);
    double seconds = PyFloat_AsDouble(at);
    if (seconds == -1.0 && PyErr_Occurred()) return -1;
    double millis = seconds * 1000.0;
    if (!(millis > -9.2e18 && millis < 9.2e18)) {
        PyErr_SetString(PyExc_ValueError, "a time out of range");
        return -1;
    }
    *stamp = (int64_t)millis; /* truncated toward zero, as int() */
    return 0;
}

/* encode(values, logged_at, key, start, max_bytes) */
static PyObject *encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyList_Check(args[0]) || !PyList_Check(args[1]) ||
        !(args[2] == Py_None || PyBytes_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError,
                        "encode(values: list, logged_at: list, key: bytes | None, start, "
                        "max_bytes)");
        return NULL;
    }
    PyObject *values = args[0], *logged_at = args[1], *key = args[2];
    Py_ssize_t start = PyLong_AsSsize_t(args[3]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t max_bytes = PyLong_AsSsize_t(args[4]);
    if (max_bytes == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values);
    if (PyList_GET_SIZE(logged_at) != n) {
        PyErr_SetString(PyExc_ValueError, "values and logged_at must have the same length");
        return NULL;
    }
    if (start < 0 || start >= n) {
        PyErr_SetString(PyExc_ValueError, "start must index a value");
        return NULL;
    }
    const char *key_data = key == Py_None ? NULL : PyBytes_AS_STRING(key);
    Py_ssize_t key_len = key == Py_None ? -1 : PyBytes_GET_SIZE(key);
    int64_t first, latest, stamp;
    if (stamp_of(logged_at, start, &first) < 0) return NULL;
    latest = first;
    /* first pass: how many records fit, and the batch's size */
    Py_ssize_t size = HEADER_SIZE, end = start;
    for (; end < n; end++) {
        PyObject *value = PyList_GET_ITEM(values, end);
        if (!PyBytes_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "values must be bytes");
            return NULL;
        }
        if (stamp_of(logged_at, end, &stamp) < 0) return NULL;
        Py_ssize_t body = body_size(stamp - first, end - start, key_len, PyBytes_GET_SIZE(value));
        Py_ssize_t record = body + varint_size(body);
        if (end > start && size + record > max_bytes) break;
        if (record > PY_SSIZE_T_MAX - size) {
            PyErr_NoMemory();
            return NULL;
        }
        size += record;
        if (stamp > latest) latest = stamp;
    }
    Py_ssize_t count = end - start;
    if (size - AFTER_LENGTH > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "a record batch holds at most 2 GiB");
        return NULL;
    }
    PyObject *batch = PyBytes_FromStringAndSize(NULL, size);
    if (batch == NULL) return NULL;
    unsigned char *base = (unsigned char *)PyBytes_AS_STRING(batch);
    unsigned char *out = base;
    out = put_be(out, 0, 8);                                /* base offset */
    out = put_be(out, (uint64_t)(size - AFTER_LENGTH), 4);  /* length */
    out = put_be(out, (uint32_t)-1, 4);                     /* partition leader epoch */
    *out++ = 2;                                             /* magic */
    out = put_be(out, 0, 4);                                /* CRC, below */
    out = put_be(out, 0, 2);                                /* attributes */
    out = put_be(out, (uint32_t)(count - 1), 4);            /* last offset delta */
    out = put_be(out, (uint64_t)first, 8);
    out = put_be(out, (uint64_t)latest, 8);
    out = put_be(out, (uint64_t)-1, 8);                     /* producer id */
    out = put_be(out, (uint16_t)-1, 2);                     /* producer epoch */
    out = put_be(out, 0, 4);                                /* base sequence */
    out = put_be(out, (uint32_t)count, 4);
    for (Py_ssize_t i = start; i < end; i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        Py_ssize_t value_len = PyBytes_GET_SIZE(value);
        stamp_of(logged_at, i, &stamp); /* (read once already: cannot fail) */
        Py_ssize_t body = body_size(stamp - first, i - start, key_len, value_len);
        out = put_varint(out, body);
        *out++ = 0; /* attributes */
        out = put_varint(out, stamp - first);
        out = put_varint(out, i - start);
        if (key_data == NULL) {
            *out++ = 1; /* null */
        } else {
            out = put_varint(out, key_len);
            memcpy(out, key_data, (size_t)key_len);
            out += key_len;
        }
        out = put_varint(out, value_len);
        memcpy(out, PyBytes_AS_STRING(value), (size_t)value_len);
        out += value_len;
        *out++ = 0; /* no headers */
    }
    put_be(base + CRC_AT, crc32c(base + ATTRIBUTES_AT, (size_t)(size - ATTRIBUTES_AT)), 4);
    return Py_BuildValue("(Nn)", batch, end);
}

static PyMethodDef METHODS[] = {
    {"encode", (PyCFunction)(void (*)(void))encode, METH_FASTCALL,
     "encode(values, logged_at, key, start, max_bytes): a Kafka record batch of values "
     "from start, as many as fit, and the index of the first left out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "portico.gateway.telemetry.recordbatch",
    "Kafka record batches written from a logger's entries (see recordbatch.py).", -1, METHODS,
};

PyMODINIT_FUNC PyInit_recordbatch(void) {
    crc_table_init();
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    HAS_SSE42 = __builtin_cpu_supports("sse4.2");
#endif
    return PyModule_Create(&MODULE);
}
