/* Kafka record batches (magic 2, uncompressed) written from a logger's entries: the C of
 * recordbatch.py (read its docstring first: it is the reference, aiokafka's own builder, and
 * tests/gateway/test_recordbatch.py checks that both write the same bytes for the same
 * entries, which aiokafka reads back with their CRC checked).
 *
 * Included by jsonline.c, whose EntryBatch writes the record batches of its own entries
 * straight from its buffer (record_extent, then record_batch): no bytes object per entry on
 * the way, and the Produce request's leading fields written in front of the batch by the same
 * call, so that the request is not joined again afterwards.
 *
 * Why C: stream-logger's batches went through aiokafka's builder at ~7,700 instructions an
 * entry (callgrind, bench/bench_instructions.py): a record appended at a time into a buffer
 * grown by reallocation, then a CRC-32C a byte at a time over the whole batch. Here a batch
 * is sized first, written once into a bytes object of its size, and its CRC-32C computed
 * eight bytes an instruction where the CPU has SSE 4.2. */
#ifndef PORTICO_RECORDBATCH_H
#define PORTICO_RECORDBATCH_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ CRC-32C (Castagnoli) */

static uint32_t CRC_TABLE[256];
static int HAS_SSE42 = 0;

/* once, from the module's init */
static void record_crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        CRC_TABLE[i] = c;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    HAS_SSE42 = __builtin_cpu_supports("sse4.2");
#endif
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

/* the entries a batch is written from: entry i is data[starts[i]:ends[i]], logged at at[i]
 * (epoch seconds) */
typedef struct {
    const char *data;
    const Py_ssize_t *starts;
    const Py_ssize_t *ends;
    const double *at;
    Py_ssize_t count;
} RecordEntries;

#define RECORD_HEADER_SIZE 61
#define RECORD_AFTER_LENGTH 12
#define RECORD_CRC_AT 17
#define RECORD_ATTRIBUTES_AT 21

/* a record's body (from its attributes to its headers' count) */
static inline Py_ssize_t record_body_size(int64_t delta, Py_ssize_t offset, Py_ssize_t key_len,
                                          Py_ssize_t value_len) {
    return 1 + varint_size(delta) + varint_size(offset) +
           (key_len < 0 ? 1 : varint_size(key_len) + key_len) + varint_size(value_len) +
           value_len + 1;
}

/* the stamp of entry i: int(seconds * 1000), as the reference; -1 with an error set */
static int record_stamp(const RecordEntries *e, Py_ssize_t i, int64_t *stamp) {
    double millis = e->at[i] * 1000.0;
    if (!(millis > -9.2e18 && millis < 9.2e18)) {
        PyErr_SetString(PyExc_ValueError, "a time out of range");
        return -1;
    }
    *stamp = (int64_t)millis; /* truncated toward zero, as int() */
    return 0;
}

static int record_start_ok(const RecordEntries *e, Py_ssize_t start) {
    if (start >= 0 && start < e->count) return 0;
    PyErr_SetString(PyExc_ValueError, "start must index a value");
    return -1;
}

/* The record batch of entries start..end (end excluded): how many fit in max_bytes from start
 * (at least one, as aiokafka's builder takes a first record whatever its size), and its size,
 * its first and latest stamps; stop_at: end at most there. -1 with an error set. */
static int record_measure(const RecordEntries *e, Py_ssize_t key_len, Py_ssize_t start,
                          Py_ssize_t stop_at, Py_ssize_t max_bytes, Py_ssize_t *size_out,
                          Py_ssize_t *end_out, int64_t *first, int64_t *latest) {
    int64_t stamp;
    if (record_stamp(e, start, first) < 0) return -1;
    *latest = *first;
    Py_ssize_t size = RECORD_HEADER_SIZE, end = start;
    for (; end < stop_at; end++) {
        if (record_stamp(e, end, &stamp) < 0) return -1;
        Py_ssize_t value_len = e->ends[end] - e->starts[end];
        Py_ssize_t body = record_body_size(stamp - *first, end - start, key_len, value_len);
        Py_ssize_t record = body + varint_size(body);
        if (end > start && size + record > max_bytes) break;
        if (record > PY_SSIZE_T_MAX - size) {
            PyErr_NoMemory();
            return -1;
        }
        size += record;
        if (stamp > *latest) *latest = stamp;
    }
    if (size - RECORD_AFTER_LENGTH > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "a record batch holds at most 2 GiB");
        return -1;
    }
    *size_out = size;
    *end_out = end;
    return 0;
}

/* record_extent: (size, end) of the batch from start within max_bytes; -1 with an error set */
static int record_extent(const RecordEntries *e, Py_ssize_t key_len, Py_ssize_t start,
                         Py_ssize_t max_bytes, Py_ssize_t *size, Py_ssize_t *end) {
    int64_t first, latest;
    if (record_start_ok(e, start) < 0) return -1;
    return record_measure(e, key_len, start, e->count, max_bytes, size, end, &first, &latest);
}

/* prefix, then the record batch of entries start..end, as one new bytes object */
static PyObject *record_batch(const RecordEntries *e, const char *prefix, Py_ssize_t prefix_len,
                              const char *key, Py_ssize_t key_len, Py_ssize_t start,
                              Py_ssize_t end) {
    if (record_start_ok(e, start) < 0) return NULL;
    if (!(start < end && end <= e->count)) {
        PyErr_SetString(PyExc_ValueError, "end must follow start, within the values");
        return NULL;
    }
    int64_t first, latest, stamp = 0;
    Py_ssize_t size, measured;
    if (record_measure(e, key_len, start, end, PY_SSIZE_T_MAX, &size, &measured, &first,
                       &latest) < 0)
        return NULL;
    if (size > PY_SSIZE_T_MAX - prefix_len) return PyErr_NoMemory();
    PyObject *batch = PyBytes_FromStringAndSize(NULL, prefix_len + size);
    if (batch == NULL) return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(batch);
    memcpy(out, prefix, (size_t)prefix_len);
    unsigned char *base = out + prefix_len;
    Py_ssize_t count = end - start;
    out = base;
    out = put_be(out, 0, 8);                                      /* base offset */
    out = put_be(out, (uint64_t)(size - RECORD_AFTER_LENGTH), 4); /* length */
    out = put_be(out, (uint32_t)-1, 4);                           /* partition leader epoch */
    *out++ = 2;                                                   /* magic */
    out = put_be(out, 0, 4);                                      /* CRC, below */
    out = put_be(out, 0, 2);                                      /* attributes */
    out = put_be(out, (uint32_t)(count - 1), 4);                  /* last offset delta */
    out = put_be(out, (uint64_t)first, 8);
    out = put_be(out, (uint64_t)latest, 8);
    out = put_be(out, (uint64_t)-1, 8); /* producer id */
    out = put_be(out, (uint16_t)-1, 2); /* producer epoch */
    out = put_be(out, 0, 4);            /* base sequence */
    out = put_be(out, (uint32_t)count, 4);
    for (Py_ssize_t i = start; i < end; i++) {
        Py_ssize_t value_len = e->ends[i] - e->starts[i];
        record_stamp(e, i, &stamp); /* (read once already: cannot fail) */
        Py_ssize_t body = record_body_size(stamp - first, i - start, key_len, value_len);
        out = put_varint(out, body);
        *out++ = 0; /* attributes */
        out = put_varint(out, stamp - first);
        out = put_varint(out, i - start);
        if (key == NULL) {
            *out++ = 1; /* null */
        } else {
            out = put_varint(out, key_len);
            memcpy(out, key, (size_t)key_len);
            out += key_len;
        }
        out = put_varint(out, value_len);
        memcpy(out, e->data + e->starts[i], (size_t)value_len);
        out += value_len;
        *out++ = 0; /* no headers */
    }
    put_be(base + RECORD_CRC_AT,
           crc32c(base + RECORD_ATTRIBUTES_AT, (size_t)(size - RECORD_ATTRIBUTES_AT)), 4);
    return batch;
}

#endif
