/* The fast path of _xml_json.c: the same JSON text for the documents most answers are, in a
 * third of the time, with pugixml; every other document is declined and goes to the strict
 * path (libxml2), whose acceptance and error messages stay the module's.
 *
 * Why: xml-to-json converts a whole answer per request. libxml2's bare parse of a 10 KB
 * answer (SAX2, empty callbacks) costs more than the throughput target leaves for the whole
 * conversion (README, "What each plugin costs"). pugixml (vendored in _pugixml/, version
 * 1.13, MIT; compiled into this module so that its accessors inline) parses in place, in a
 * fifth of that, and by construction never reads a DTD, never declares, expands or loads an
 * entity, never touches the network: there is nothing to switch off.
 *
 * pugixml does not check everything XML requires: it is a non-validating parser that leaves
 * some well-formedness constraints to its caller. This file checks each of them, and any
 * document it cannot vouch for is declined, never converted:
 *   - the bytes are UTF-8 and only XML characters (before parsing);
 *   - the XML declaration, if any, is at the start and says version 1.0, UTF-8;
 *   - names are QNames (ASCII here: a non-ASCII name is declined), prefixes are declared,
 *     namespace declarations are legal, no two attributes share a name or an expanded name;
 *   - references are XML's five or character references to XML characters; "<" is not in
 *     an attribute value; "]]>" is not in text; comments hold no "--";
 *   - exactly one root element, nothing but comments and white space around it;
 *   - no document type declaration, processing instruction or CDATA outside the root
 *     (declined: the strict path refuses, or accepts, each);
 *   - at most 255 elements deep (the strict path's limit is 256), at most 10 MB (libxml2's
 *     limit on a text).
 * Declined as well, since rare and subtle in the mapping: a namespace that needs a ns<N>
 * prefix or a second prefix for attributes, an element in the xml namespace, a sibling name
 * that comes back after another one (the mapping joins it to its first), a non-ASCII
 * character at an end of mixed text (str.strip()'s white space), more than 64 attributes or
 * distinct child names on an element, 256 namespace declarations, a namespace name that is
 * not a plain absolute URI. tests/gateway/plugins/test_xml_json.py runs generated documents,
 * and documents damaged byte by byte, through both paths and the reference: the same bytes,
 * or the same refusal.
 *
 * The mapping is _xml_mapping.py's; the names are given in the same order as its _Names
 * gives them (an element, then its attributes, then its children, in document order), since
 * the first occurrence of a namespace decides its prefix. One walk over pugixml's tree checks,
 * names and writes: sibling elements of one key are contiguous here (else declined), so an
 * array is opened when a key repeats the one before (the first value moved behind a "["),
 * and a top-level element's namespace declarations, known once it is written, are moved in
 * front of its properties.
 *
 * State kept between calls: only memory reused (buffers, hash tables cleared slot by slot,
 * pugixml's pages), under the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PUGIXML_HEADER_ONLY
#define PUGIXML_NO_XPATH
#define PUGIXML_NO_STL
#define PUGIXML_NO_EXCEPTIONS
#include "_pugixml/pugixml.hpp"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "../telemetry/json_escape.h"
#include "_xml_fast.h"

namespace {

using pugi::xml_attribute;
using pugi::xml_node;

const char XML_NS[] = "http://www.w3.org/XML/1998/namespace";
const char XMLNS_NS[] = "http://www.w3.org/2000/xmlns/";
const int UNCHANGED = 0;
const int CAMEL = 1;
const int MAX_DEPTH = 255;
const Py_ssize_t MAX_SIZE = 10000000;

/* ------------------------------------------------------------------ memory */

/* a growable byte buffer; reused from call to call (the GIL serialises the calls) */
struct Bytes {
    char *data = nullptr;
    size_t len = 0, cap = 0;
    /* a buffer kept from call to call is kept at most this large: one long answer's
     * memory is given back after it */
    void trim(size_t keep) {
        if (cap <= keep) return;
        free(data);
        data = nullptr;
        len = cap = 0;
    }
    bool reserve(size_t more) {
        if (len + more <= cap) return true;
        size_t want = cap * 2 > len + more ? cap * 2 : len + more + 256;
        char *grown = (char *)realloc(data, want);
        if (grown == nullptr) return false;
        data = grown;
        cap = want;
        return true;
    }
    bool put(const char *s, size_t n) {
        if (!reserve(n)) return false;
        if (n) memcpy(data + len, s, n);
        len += n;
        return true;
    }
    bool byte(char c) {
        if (!reserve(1)) return false;
        data[len++] = c;
        return true;
    }
};

template <typename T> struct Vec {
    T *items = nullptr;
    int32_t count = 0, cap = 0;
    T *push() {
        if (count == cap) {
            int32_t want = cap ? cap * 2 : 64;
            T *grown = (T *)realloc(items, sizeof(T) * (size_t)want);
            if (grown == nullptr) return nullptr;
            items = grown;
            cap = want;
        }
        return &items[count++];
    }
    bool fill(int32_t size, T value) { /* grow to size items, the new ones value */
        while (count < size)
            if (push() == nullptr) return false;
            else items[count - 1] = value;
        return true;
    }
    T &operator[](int32_t i) { return items[i]; }
};

/* ------------------------------------------------------------------ characters */

/* the bytes of w that are zero (the lowest flag is exact: a borrow only carries upwards) */
inline uint64_t zeros(uint64_t w) { return (w - ONES) & ~w & HIGHS; }
inline uint64_t bytes_of(uint64_t w, unsigned char c) { return zeros(w ^ (ONES * c)); }
inline uint64_t word_at(const char *s) {
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}

/* the length of a NUL-terminated text in the parsed buffer (which has slack: a word may be
 * read past the NUL), and whether it holds one of two bytes */
inline uint32_t scan(const char *s, unsigned char a, unsigned char b, bool *found) {
    uint32_t n = 0;
    for (;; n += 8) {
        uint64_t w = word_at(s + n);
        uint64_t z = zeros(w), hit = bytes_of(w, a) | bytes_of(w, b);
        if (hit && (!z || __builtin_ctzll(hit) < __builtin_ctzll(z))) {
            *found = true;
            return n + (uint32_t)strlen(s + n);
        }
        if (z) return n + (uint32_t)(__builtin_ctzll(z) >> 3);
    }
}

/* the length of the XML character at s[0] (UTF-8, n bytes left), 0 if it is none: XML 1.0's
 * Char is tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF */
inline size_t xml_char_at(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return c >= 0x20 || c == 9 || c == 10 || c == 13 ? 1 : 0;
    uint32_t cp;
    size_t size;
    if (c >= 0xC2 && c < 0xE0) size = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c < 0xF0) size = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c < 0xF5) size = 4, cp = c & 0x07;
    else return 0;
    if (size > n) return 0;
    for (size_t k = 1; k < size; k++) {
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((size == 3 && cp < 0x800) || (size == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
    return size;
}

/* whether s is UTF-8 holding only XML characters, copied to `to` (where pugixml parses in
 * place) on the way: 16 bytes at a time while they are ASCII (tab, LF and CR among them) */
bool xml_chars(const unsigned char *s, size_t n, unsigned char *to) {
    size_t i = 0;
    while (i < n) {
#ifdef __SSE2__
        if (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            _mm_storeu_si128((__m128i *)(to + i), v);
            /* (signed: a byte >= 0x80 is below 0x20 too) */
            unsigned below = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            if (!below) {
                i += 16;
                continue;
            }
            unsigned high = (unsigned)_mm_movemask_epi8(v);
            __m128i tab = _mm_cmpeq_epi8(v, _mm_set1_epi8(9)), lf = _mm_cmpeq_epi8(v, _mm_set1_epi8(10));
            __m128i cr = _mm_cmpeq_epi8(v, _mm_set1_epi8(13));
            unsigned space = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(tab, lf), cr));
            if (below & ~high & ~space) return false; /* a control character */
            if (!high) {
                i += 16;
                continue;
            }
            i += (size_t)__builtin_ctz(high); /* the first non-ASCII byte: checked below */
        }
#endif
        size_t size = xml_char_at(s + i, n - i);
        if (size == 0) return false;
        memcpy(to + i, s + i, size);
        i += size;
    }
    return true;
}

bool xml_char(uint32_t c) {
    return c == 9 || c == 10 || c == 13 || (c >= 0x20 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* the reference at s ("&..."): its length and, in *out (*out_len bytes), what it stands
 * for; 0 if it is none XML allows without a DTD */
size_t reference(const char *s, char *out, size_t *out_len) {
    if (s[1] == '#') {
        uint32_t c = 0;
        size_t i = 2;
        bool hex = s[2] == 'x';
        if (hex) i++;
        size_t digits = 0;
        for (;; i++, digits++) {
            char d = s[i];
            uint32_t v;
            if (d >= '0' && d <= '9') v = (uint32_t)(d - '0');
            else if (hex && d >= 'a' && d <= 'f') v = (uint32_t)(d - 'a' + 10);
            else if (hex && d >= 'A' && d <= 'F') v = (uint32_t)(d - 'A' + 10);
            else break;
            c = c * (hex ? 16 : 10) + v;
            if (c > 0x10FFFF) return 0;
        }
        if (digits == 0 || s[i] != ';' || !xml_char(c)) return 0;
        if (c < 0x80) out[0] = (char)c, *out_len = 1;
        else if (c < 0x800) out[0] = (char)(0xC0 | (c >> 6)), out[1] = (char)(0x80 | (c & 0x3F)), *out_len = 2;
        else if (c < 0x10000)
            out[0] = (char)(0xE0 | (c >> 12)), out[1] = (char)(0x80 | ((c >> 6) & 0x3F)),
            out[2] = (char)(0x80 | (c & 0x3F)), *out_len = 3;
        else
            out[0] = (char)(0xF0 | (c >> 18)), out[1] = (char)(0x80 | ((c >> 12) & 0x3F)),
            out[2] = (char)(0x80 | ((c >> 6) & 0x3F)), out[3] = (char)(0x80 | (c & 0x3F)), *out_len = 4;
        return i + 1;
    }
    static const struct { const char *name; size_t len; char c; } NAMED[] = {
        {"amp;", 4, '&'}, {"lt;", 3, '<'}, {"gt;", 3, '>'}, {"quot;", 5, '"'}, {"apos;", 5, '\''}};
    for (const auto &e : NAMED)
        if (memcmp(s + 1, e.name, e.len) == 0) {
            out[0] = e.c;
            *out_len = 1;
            return e.len + 1;
        }
    return 0;
}

/* whether a text (NUL-terminated, in the parsed buffer) is one XML allows: its references
 * are, and no "]]>" in character data, no "<" in an attribute value */
bool refs_ok(const char *v, bool attribute) {
    const char *stops = attribute ? "&<" : "&]";
    for (const char *p = v;; p++) {
        p += strcspn(p, stops);
        if (*p == 0) return true;
        if (*p == '<') return false;
        if (*p == ']') {
            if (p[1] == ']' && p[2] == '>') return false;
            continue;
        }
        char out[4];
        size_t n;
        size_t len = reference(p, out, &n);
        if (len == 0) return false;
        p += len - 1;
    }
}

/* ------------------------------------------------------------------ JSON */

/* bytes to escape in JSON (", \, below 0x20) or to decode ("&": a reference, in text and
 * attribute values): the lowest flag is exact */
inline uint64_t flags_of(uint64_t w) { return flags_escape(w) | bytes_of(w, '&'); }

/* the bytes a reference stood for (reference), JSON-escaped at out; past them */
inline char *put_decoded(char *out, const char *decoded, size_t len) {
    for (size_t k = 0; k < len; k++) {
        unsigned char d = (unsigned char)decoded[k];
        if (d < 0x20 || d == '"' || d == '\\') out += escape_of(d, out);
        else *out++ = (char)d;
    }
    return out;
}

/* a checked text of n bytes, its references decoded (decode) and JSON-escaped, without
 * quotes; the buffer has 8 bytes of slack after every text (NUL and more) */
__attribute__((always_inline)) inline bool put_text(Bytes &o, const char *s, size_t n, bool decode) {
    if (!o.reserve(6 * n + 16)) return false;
    char *out = o.data + o.len;
    const char *end = s + n;
    while (s < end) {
        uint64_t w;
        memcpy(&w, s, 8);
        memcpy(out, &w, 8);
        uint64_t flags = flags_of(w);
        if (!flags) {
            out += 8, s += 8;
            continue;
        }
        int clean = __builtin_ctzll(flags) >> 3;
        out += clean, s += clean;
        if (s >= end) break;
        unsigned char c = (unsigned char)*s;
        if (c == '&' && decode) {
            char decoded[4];
            size_t len;
            s += reference(s, decoded, &len); /* (checked: never 0) */
            out = put_decoded(out, decoded, len);
            continue;
        }
        if (c == '&') *out++ = '&';
        else out += escape_of(c, out);
        s++;
    }
    if (s > end) out -= s - end;
    o.len = (size_t)(out - o.data);
    return true;
}

/* ------------------------------------------------------------------ names */

unsigned char NAME_START[256], NAME_CHAR[256];
void name_tables() {
    for (int c = 'a'; c <= 'z'; c++) NAME_START[c] = NAME_CHAR[c] = 1;
    for (int c = 'A'; c <= 'Z'; c++) NAME_START[c] = NAME_CHAR[c] = 1;
    NAME_START['_'] = NAME_CHAR['_'] = 1;
    for (int c = '0'; c <= '9'; c++) NAME_CHAR[c] = 1;
    NAME_CHAR['-'] = NAME_CHAR['.'] = 1;
}

struct Str {
    const char *s;
    uint32_t n;
    bool is(const char *t) const { return strlen(t) == n && memcmp(s, t, n) == 0; }
    bool same(const Str &o) const { return n == o.n && memcmp(s, o.s, n) == 0; }
};

inline uint64_t hash_of(const char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, n - i);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ULL;
    return h ^ (h >> 29);
}

/* a QName met in the document (its text is the parsed buffer's, for the call) */
struct Qname {
    Str text;
    int32_t colon; /* -1: no prefix */
    int32_t local; /* interned (Strings) */
    uint64_t hash;
    uint64_t first; /* its first 8 bytes (zero past the end) */
    int32_t slot;   /* in Conv.qname_table */
    /* the key it was last given as an element's / an attribute's name, and in which
     * namespace (-3: none yet): a name meets the same namespace again, mostly */
    int32_t element_uri, element_key, attribute_uri, attribute_key;
};

/* a name's length, hash and first word, reading a word at a time */
inline uint32_t name_scan(const char *s, uint64_t *hash, uint64_t *first) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (uint32_t n = 0;; n += 8) {
        uint64_t w = word_at(s + n);
        uint64_t z = zeros(w);
        if (z) {
            int k = __builtin_ctzll(z) >> 3;
            w = k ? w & (~0ULL >> (64 - 8 * k)) : 0;
            if (n == 0) *first = w;
            h = (h ^ w ^ (uint64_t)(n + (uint32_t)k)) * 0xFF51AFD7ED558CCDULL;
            *hash = h ^ (h >> 31);
            return n + (uint32_t)k;
        }
        if (n == 0) *first = w;
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
        h ^= h >> 29;
    }
}

/* strings interned for the call: local names and namespace names */
struct Strings {
    Vec<Str> items;
    Vec<int32_t> table;
    Vec<uint64_t> hashes;
    void reset() {
        items.count = hashes.count = 0;
        table.count = 0;
    }
    int32_t id(const char *s, uint32_t n) {
        if (table.count == 0 && !table.fill(256, -1)) return -1;
        uint64_t h = hash_of(s, n);
        if (items.count * 2 >= table.count) { /* rehash */
            int32_t size = table.count * 2;
            table.count = 0;
            if (!table.fill(size, -1)) return -1;
            for (int32_t k = 0; k < items.count; k++) {
                int32_t at = (int32_t)(hashes[k] & (uint64_t)(size - 1));
                while (table[at] >= 0) at = (at + 1) & (size - 1);
                table[at] = k;
            }
        }
        int32_t mask = table.count - 1, at = (int32_t)(h & (uint64_t)mask);
        for (; table[at] >= 0; at = (at + 1) & mask) {
            int32_t k = table[at];
            if (hashes[k] == h && items[k].n == n && memcmp(items[k].s, s, n) == 0) return k;
        }
        Str *item = items.push();
        uint64_t *slot = hashes.push();
        if (item == nullptr || slot == nullptr) return -1;
        *item = Str{s, n};
        *slot = h;
        table[at] = items.count - 1;
        return items.count - 1;
    }
};

/* ------------------------------------------------------------------ the conversion */

const int32_t DECLINE = -1; /* the strict path decides */
const int32_t NO_MEMORY = -3;
const int32_t NO_DEFAULT = -4; /* (namespace_name: xmlns="") */
const int32_t DEFAULT_PREFIX = -2; /* (assigned: the default namespace, no prefix) */
const int32_t MAX_DECLARATIONS = 256;
const int32_t MAX_ATTRIBUTES = 64;

/* where an element checked only is (Conv.check): a SOAP envelope, one of its children (the
 * first Body's children are converted), or elsewhere in it */
enum Context { ENVELOPE, ENVELOPE_CHILD, UNNAMED };

struct Decl {        /* a namespace declaration in scope */
    Str prefix;      /* n == 0: the default namespace */
    int32_t uri;     /* -1: xmlns="" (no default namespace) */
    int32_t depth;   /* the depth of the element declaring it */
};

struct Frame { /* an element opened: its name, and what closing it restores */
    int32_t uri, local, key; /* (key -1 where the mapping names none) */
    int32_t mark, outer_default;
};

struct Attr {
    int32_t uri, local, key;
    const char *value;
    uint32_t len;
};

struct Piece {
    const char *s;
    uint32_t n;
    bool cdata;
};

struct Key { /* a JSON name, written as "name": */
    uint32_t at, len; /* in Conv.key_text */
    uint64_t hash;
};

struct Conv {
    int style;
    Strings strings; /* local names, prefixes and namespace names */
    int32_t xml_ns, soap_ns, body_name, envelope_name, fault_name;
    Vec<Qname> qnames;
    Vec<int32_t> qname_table;
    Vec<Decl> scope;
    int32_t default_ns; /* the default namespace in scope, -1 none */
    int32_t declared;
    /* stacks, a region per open element: its attributes, text pieces, children's keys */
    Vec<Attr> attrs;
    Vec<Piece> pieces;
    Vec<int32_t> seen;
    Bytes &out;
    Conv(Bytes &out_) : out(out_) {}
    /* namespace (Strings id) -> its prefix in the JSON (a Strings id, DEFAULT_PREFIX, -1
     * none yet), and the serial of the last declarations it was used since */
    Vec<int32_t> assigned, used_stamp;
    int32_t used_serial;
    Vec<int32_t> used_order;
    Vec<Str> taken; /* the prefixes given */
    /* (kind, namespace, local) -> key */
    Vec<uint64_t> memo_keys;
    Vec<int32_t> memo_values;
    Vec<int32_t> memo_used; /* the slots of memo_keys in use */
    Vec<Key> keys;
    Bytes key_text;
    bool body_seen; /* SOAP: the envelope's Body was met */
    Bytes scratch;

    bool reset(int style_, const char *soap) {
        style = style_;
        strings.reset();
        /* the hash tables are kept from call to call: only the slots used are cleared */
        for (int32_t k = 0; k < qnames.count; k++) qname_table[qnames[k].slot] = -1;
        qnames.count = 0;
        for (int32_t k = 0; k < memo_used.count; k++) memo_keys[memo_used[k]] = ~0ULL;
        memo_used.count = 0;
        scope.count = attrs.count = pieces.count = seen.count = 0;
        declared = 0;
        assigned.count = used_stamp.count = 0;
        used_serial = 1;
        used_order.count = taken.count = 0;
        keys.count = 0;
        key_text.len = 0;
        body_seen = false;
        out.len = 0;
        if (!qname_table.fill(256, -1) || !memo_keys.fill(1024, ~0ULL) || !memo_values.fill(1024, -1))
            return false;
        default_ns = -1;
        xml_ns = strings.id(XML_NS, sizeof XML_NS - 1);
        soap_ns = soap[0] ? strings.id(soap, (uint32_t)strlen(soap)) : -1;
        body_name = strings.id("Body", 4);
        envelope_name = strings.id("Envelope", 8);
        fault_name = strings.id("Fault", 5);
        return xml_ns >= 0 && (soap_ns >= 0 || !soap[0]) && body_name >= 0 && envelope_name >= 0 &&
               fault_name >= 0 && grow_namespaces();
    }

    /* the QName at s (NUL-terminated): its index in qnames, or DECLINE, NO_MEMORY */
    __attribute__((always_inline)) int32_t qname(const char *s) {
        uint64_t h, first;
        uint32_t n = name_scan(s, &h, &first);
        int32_t mask = qname_table.count - 1, at = (int32_t)(h & (uint64_t)mask);
        for (; qname_table[at] >= 0; at = (at + 1) & mask) {
            Qname &q = qnames[qname_table[at]];
            if (q.hash == h && q.first == first && q.text.n == n && (n <= 8 || memcmp(q.text.s + 8, s + 8, n - 8) == 0))
                return qname_table[at];
        }
        /* NCName(:NCName)?, ASCII (a non-ASCII name is declined) */
        const unsigned char *p = (const unsigned char *)s;
        int32_t colon = -1;
        uint32_t start = 0;
        for (uint32_t i = 0; i < n; i++) {
            unsigned c = p[i];
            if (c == ':') {
                if (colon >= 0 || i == start) return DECLINE;
                colon = (int32_t)i;
                start = i + 1;
            } else if (i == start ? !NAME_START[c] : !NAME_CHAR[c]) {
                return DECLINE;
            }
        }
        if (n == start) return DECLINE;
        int32_t local = strings.id(s + start, n - start);
        Qname *q = qnames.push();
        if (local < 0 || q == nullptr) return NO_MEMORY;
        *q = Qname{Str{s, n}, colon, local, h, first, at, -3, -1, -3, -1};
        qname_table[at] = qnames.count - 1;
        if (qnames.count * 2 >= qname_table.count) { /* rehash */
            int32_t size = qname_table.count * 2;
            qname_table.count = 0;
            if (!qname_table.fill(size, -1)) return NO_MEMORY;
            for (int32_t k = 0; k < qnames.count; k++) {
                int32_t a = (int32_t)(qnames[k].hash & (uint64_t)(size - 1));
                while (qname_table[a] >= 0) a = (a + 1) & (size - 1);
                qname_table[a] = k;
                qnames[k].slot = a;
            }
        }
        return qnames.count - 1;
    }

    /* the namespace a prefix is bound to in scope: its id, -1 none (no prefix, no default
     * namespace), -2 an undeclared prefix */
    int32_t resolve(const char *prefix, uint32_t n) {
        if (n == 0) return default_ns;
        for (int32_t k = scope.count - 1; k >= 0; k--)
            if (scope[k].prefix.n == n && memcmp(scope[k].prefix.s, prefix, n) == 0) return scope[k].uri;
        if (n == 3 && memcmp(prefix, "xml", 3) == 0) return xml_ns;
        return -2;
    }

    /* a namespace declaration's value: its id, NO_DEFAULT for xmlns="", or DECLINE (a value
     * that is not a plain absolute URI, or a reserved one), NO_MEMORY. Plain: a scheme, then
     * an authority of host name characters and an optional port when "//" follows it, then
     * path characters only (no query, fragment, percent-escape, IP literal, "&": the strict
     * path judges those as its libxml2 does, and there is nothing to decode) */
    int32_t namespace_name(const char *v, bool prefixed) {
        uint32_t n = (uint32_t)strlen(v);
        if (n == 0) return prefixed ? DECLINE : NO_DEFAULT;
        auto alpha = [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; };
        auto digit = [](char c) { return c >= '0' && c <= '9'; };
        uint32_t i = 0;
        if (!alpha(v[0])) return DECLINE;
        while (i < n && (alpha(v[i]) || digit(v[i]) || v[i] == '+' || v[i] == '-' || v[i] == '.')) i++;
        if (i == n || v[i] != ':') return DECLINE;
        i++;
        if (i + 1 < n && v[i] == '/' && v[i + 1] == '/') {
            i += 2;
            uint32_t host = i;
            while (i < n && (alpha(v[i]) || digit(v[i]) || v[i] == '-' || v[i] == '.')) i++;
            if (i == host) return DECLINE;
            if (i < n && v[i] == ':') { /* a port: one to five digits */
                uint32_t port = ++i;
                while (i < n && digit(v[i])) i++;
                if (i == port || i - port > 5) return DECLINE;
            }
            if (i < n && v[i] != '/') return DECLINE;
        }
        for (; i < n; i++) {
            char c = v[i];
            if (!(alpha(c) || digit(c) || (c && strchr("-._~:/@!$'()*+,;=", c) != nullptr))) return DECLINE;
        }
        if (strcmp(v, XML_NS) == 0 || strcmp(v, XMLNS_NS) == 0) return DECLINE;
        int32_t id = strings.id(v, n);
        return id < 0 || !grow_namespaces() ? NO_MEMORY : id;
    }

    bool grow_namespaces() {
        return assigned.fill(strings.items.count, -1) && used_stamp.fill(strings.items.count, 0);
    }

    /* _Names._fresh: the wanted prefix (its id, DEFAULT_PREFIX for ""), or DECLINE where
     * the mapping would make up ns<N> (rare: left to the strict path), NO_MEMORY */
    int32_t fresh(Str wanted, bool allow_default) {
        if (!(wanted.n || allow_default) || wanted.is("xml")) return DECLINE;
        for (int32_t k = 0; k < taken.count; k++)
            if (taken[k].same(wanted)) return DECLINE;
        Str *t = taken.push();
        if (t == nullptr) return NO_MEMORY;
        *t = wanted;
        if (wanted.n == 0) return DEFAULT_PREFIX;
        int32_t id = strings.id(wanted.s, wanted.n);
        if (id < 0 || !grow_namespaces()) return NO_MEMORY;
        return id;
    }

    bool use(int32_t uri) {
        if (used_stamp[uri] == used_serial) return true;
        used_stamp[uri] = used_serial;
        int32_t *at = used_order.push();
        if (at == nullptr) return false;
        *at = uri;
        return true;
    }

    /* the memo's slot of (kind, namespace, local); *made when it has no key yet */
    int32_t memo(int kind, int32_t uri, int32_t local, bool *made) {
        uint64_t k = ((uint64_t)kind << 62) | ((uint64_t)(uint32_t)(uri + 1) << 31) | (uint32_t)local;
        int32_t mask = memo_keys.count - 1;
        int32_t at = (int32_t)((k * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
        for (; memo_keys[at] != ~0ULL; at = (at + 1) & mask)
            if (memo_keys[at] == k) {
                *made = false;
                return at;
            }
        if (keys.count * 2 >= memo_keys.count) return DECLINE; /* (a document of many names) */
        int32_t *used = memo_used.push();
        if (used == nullptr) return NO_MEMORY;
        *used = at;
        memo_keys[at] = k;
        *made = true;
        return at;
    }

    /* _xml_mapping.styled, for an ASCII name */
    bool put_styled(Str name) {
        if (style == UNCHANGED) return key_text.put(name.s, name.n);
        size_t start_len = key_text.len;
        int word_index = 0;
        uint32_t i = 0;
        const char *s = name.s;
        while (i < name.n) {
            while (i < name.n && (s[i] == '-' || s[i] == '_' || s[i] == '.')) i++;
            uint32_t start = i;
            while (i < name.n && s[i] != '-' && s[i] != '_' && s[i] != '.') i++;
            if (i == start) break;
            uint32_t size = i - start;
            if (!key_text.reserve(size)) return false;
            char *at = key_text.data + key_text.len;
            memcpy(at, s + start, size);
            if (word_index == 0 && style == CAMEL) { /* _lower_head */
                uint32_t run = 0;
                while (run < size && at[run] >= 'A' && at[run] <= 'Z') run++;
                uint32_t lower = run == 0 ? 0 : (run == size || run == 1) ? run : run - 1;
                for (uint32_t k = 0; k < lower; k++) at[k] = (char)(at[k] + ('a' - 'A'));
            } else if (at[0] >= 'a' && at[0] <= 'z') {
                at[0] = (char)(at[0] - ('a' - 'A'));
            }
            key_text.len += size;
            word_index++;
        }
        if (word_index == 0) { /* no word: the name as it is */
            key_text.len = start_len;
            return key_text.put(name.s, name.n);
        }
        return true;
    }

    /* a new key in the memo's slot at: '"', "@" for an attribute, the prefix and ":", the
     * local name (styled), '":' */
    int32_t make_key(int32_t at, bool attribute, int32_t prefix, int32_t local, bool style_it) {
        Key *key = keys.push();
        if (key == nullptr) return NO_MEMORY;
        size_t start = key_text.len;
        if (!key_text.byte('"') || (attribute && !key_text.byte('@'))) return NO_MEMORY;
        if (prefix >= 0) {
            Str p = strings.items[prefix];
            if (!key_text.put(p.s, p.n) || !key_text.byte(':')) return NO_MEMORY;
        }
        Str l = strings.items[local];
        if (!(style_it ? put_styled(l) : key_text.put(l.s, l.n)) || !key_text.put("\":", 2)) return NO_MEMORY;
        uint32_t len = (uint32_t)(key_text.len - start);
        uint64_t h = hash_of(key_text.data + start, len);
        /* two names styled alike are one JSON name (the mapping's dict has one key): one key */
        for (int32_t k = 0; k < keys.count - 1; k++)
            if (keys[k].hash == h && keys[k].len == len && memcmp(key_text.data + keys[k].at, key_text.data + start, len) == 0) {
                keys.count--;
                key_text.len = start;
                memo_values[at] = k;
                return k;
            }
        /* put_key copies a short key as two 16-byte words: its text is followed by 32 bytes
         * of the buffer's own, whatever key comes last */
        if (!key_text.reserve(32)) return NO_MEMORY;
        *key = Key{(uint32_t)start, len, h};
        memo_values[at] = keys.count - 1;
        return keys.count - 1;
    }

    /* _Names.element: the key of an element (namespace uri, -1 none; the prefix it was
     * written with) */
    int32_t element_key(int32_t uri, int32_t local, Str written) {
        bool made;
        int32_t at = memo(0, uri, local, &made);
        if (at < 0) return at;
        if (made) {
            int32_t prefix = -1;
            if (uri >= 0) {
                if (uri == xml_ns) return DECLINE; /* (an element in the xml namespace) */
                prefix = assigned[uri];
                if (prefix == -1) {
                    prefix = fresh(written, true);
                    if (prefix == DECLINE || prefix == NO_MEMORY) return prefix;
                    assigned[uri] = prefix;
                }
                if (prefix == DEFAULT_PREFIX) prefix = -1;
            }
            int32_t key = make_key(at, false, prefix, local, true);
            if (key < 0) return key;
        }
        if (uri >= 0 && !use(uri)) return NO_MEMORY;
        return memo_values[at];
    }

    /* the first prefix bound to uri in the current element's scope, in lxml's nsmap order
     * (the element's own declarations, then its parent's...) and not hidden by an inner
     * declaration of the same prefix; empty if none */
    Str scope_prefix(int32_t uri) {
        for (int32_t k = scope.count - 1; k >= 0;) {
            int32_t first = k;
            while (first > 0 && scope[first - 1].depth == scope[k].depth) first--;
            for (int32_t j = first; j <= k; j++) {
                Decl &d = scope[j];
                if (d.prefix.n == 0 || d.uri != uri) continue;
                bool hidden = false;
                for (int32_t m = k + 1; m < scope.count && !hidden; m++) hidden = scope[m].prefix.same(d.prefix);
                if (!hidden) return d.prefix;
            }
            k = first - 1;
        }
        return Str{"", 0};
    }

    /* _Names.attribute: the key of an attribute (namespace uri, -1 none) */
    int32_t attribute_key(int32_t uri, int32_t local) {
        bool made;
        int32_t at = memo(1, uri, local, &made);
        if (at < 0) return at;
        if (made) {
            int32_t prefix = -1;
            bool style_it = true;
            if (uri >= 0 && uri == xml_ns) {
                prefix = strings.id("xml", 3);
                if (prefix < 0) return NO_MEMORY;
                style_it = false;
            } else if (uri >= 0) {
                prefix = assigned[uri];
                if (prefix == DEFAULT_PREFIX) return DECLINE; /* (a second prefix: declined) */
                if (prefix == -1) {
                    prefix = fresh(scope_prefix(uri), false);
                    if (prefix == DECLINE || prefix == NO_MEMORY) return prefix;
                    assigned[uri] = prefix;
                }
            }
            int32_t key = make_key(at, true, prefix, local, style_it);
            if (key < 0) return key;
        }
        if (uri >= 0 && uri != xml_ns && !use(uri)) return NO_MEMORY;
        return memo_values[at];
    }

    /* _Names.declarations and _declared, for a top-level element whose value was written
     * from value_start: the namespaces used since the last, as @xmlns properties first (its
     * text becomes a #text property, null none) */
    bool declare(size_t value_start) {
        if (used_order.count == 0) return true;
        scratch.len = 0;
        for (int32_t k = 0; k < used_order.count; k++) {
            int32_t uri = used_order[k], prefix = assigned[uri];
            Str u = strings.items[uri];
            if ((k && !scratch.byte(',')) || !scratch.put("\"@xmlns", 7)) return false;
            if (prefix >= 0 && (!scratch.byte(':') || !scratch.put(strings.items[prefix].s, strings.items[prefix].n)))
                return false;
            /* (a namespace name needs no escaping: namespace_name allows no '"' nor '\\') */
            if (!scratch.put("\":\"", 3) || !scratch.put(u.s, u.n) || !scratch.byte('"')) return false;
        }
        used_order.count = 0;
        used_serial++;
        char first = out.data[value_start];
        if (first == 'n') { /* null: {declarations} */
            out.len = value_start;
            return out.byte('{') && out.put(scratch.data, scratch.len) && out.byte('}');
        }
        /* an object: the declarations after its "{"; a text: {declarations,"#text":text} */
        size_t at = first == '{' ? value_start + 1 : value_start;
        size_t insert = first == '{' ? scratch.len + 1 : scratch.len + 10; /* ({ and ,"#text":) */
        if (!out.reserve(insert + 1)) return false;
        memmove(out.data + at + insert, out.data + at, out.len - at);
        char *to = out.data + at;
        if (first == '{') {
            memcpy(to, scratch.data, scratch.len);
            to[scratch.len] = ',';
        } else {
            to[0] = '{';
            memcpy(to + 1, scratch.data, scratch.len);
            memcpy(to + 1 + scratch.len, ",\"#text\":", 9);
        }
        out.len += insert;
        return first == '{' || out.byte('}');
    }

    static bool comment_ok(const char *v) {
        size_t n = strlen(v);
        return strstr(v, "--") == nullptr && (n == 0 || v[n - 1] != '-');
    }

    /* an element's namespace declarations (in scope from now on) and name; its key when the
     * mapping names it. 0, or DECLINE, NO_MEMORY; close(f) ends its scope. */
    int32_t open(xml_node node, int depth, bool naming, Frame &f) {
        if (depth > MAX_DEPTH) return DECLINE;
        f.mark = scope.count;
        f.outer_default = default_ns;
        for (xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
            const char *name = a.name();
            if (name[0] != 'x' || strncmp(name, "xmlns", 5) != 0 || (name[5] != 0 && name[5] != ':')) continue;
            Str prefix{"", 0};
            if (name[5] == ':') {
                int32_t q = qname(name);
                if (q < 0) return q;
                prefix = Str{name + 6, (uint32_t)strlen(name + 6)};
                if (prefix.is("xml") || prefix.is("xmlns")) return DECLINE;
            }
            int32_t uri = namespace_name(a.value(), prefix.n != 0);
            if (uri == DECLINE || uri == NO_MEMORY) return uri;
            for (int32_t k = f.mark; k < scope.count; k++) /* (declared twice: one attribute twice) */
                if (scope[k].prefix.same(prefix)) return DECLINE;
            if (++declared > MAX_DECLARATIONS) return DECLINE;
            Decl *d = scope.push();
            if (d == nullptr) return NO_MEMORY;
            *d = Decl{prefix, uri == NO_DEFAULT ? -1 : uri, depth};
            if (prefix.n == 0) default_ns = d->uri;
        }
        return name(node, naming, f);
    }

    void close(const Frame &f) {
        scope.count = f.mark;
        default_ns = f.outer_default;
    }

    /* an element's name resolved (its declarations in scope) and, when naming, its key */
    __attribute__((always_inline)) int32_t name(xml_node node, bool naming, Frame &f) {
        int32_t q = qname(node.name());
        if (q < 0) return q;
        uint32_t prefix = qnames[q].colon < 0 ? 0u : (uint32_t)qnames[q].colon;
        int32_t uri = prefix ? resolve(qnames[q].text.s, prefix) : default_ns;
        if (uri == -2 || (prefix == 5 && memcmp(qnames[q].text.s, "xmlns", 5) == 0)) return DECLINE;
        f.uri = uri;
        f.local = qnames[q].local;
        f.key = -1;
        if (!naming) return 0;
        if (qnames[q].element_uri == uri) { /* (a name meets the same namespace, mostly) */
            f.key = qnames[q].element_key;
            return uri >= 0 && !use(uri) ? NO_MEMORY : 0;
        }
        int32_t key = element_key(uri, qnames[q].local, Str{qnames[q].text.s, prefix});
        if (key < 0) return key;
        qnames[q].element_uri = uri;
        qnames[q].element_key = key;
        f.key = key;
        return 0;
    }

    /* an element's attributes (namespace declarations left out), checked and, when naming,
     * named, onto attrs. 0, or DECLINE, NO_MEMORY */
    int32_t attributes(xml_node node, bool naming) {
        int32_t first = attrs.count;
        for (xml_attribute a = node.first_attribute(); a; a = a.next_attribute()) {
            int32_t aq = qname(a.name());
            if (aq < 0) return aq;
            const char *value = a.value();
            bool special = false;
            uint32_t len = scan(value, '&', '<', &special);
            if (special && !refs_ok(value, true)) return DECLINE;
            Qname an = qnames[aq];
            if ((an.colon < 0 && an.text.is("xmlns")) || (an.colon == 5 && memcmp(an.text.s, "xmlns", 5) == 0))
                continue; /* a namespace declaration (open): no property */
            int32_t uri = -1;
            if (an.colon >= 0) {
                uri = resolve(an.text.s, (uint32_t)an.colon);
                if (uri < 0) return DECLINE; /* an undeclared prefix */
            }
            if (attrs.count - first >= MAX_ATTRIBUTES) return DECLINE;
            for (int32_t k = first; k < attrs.count; k++) /* one expanded name twice */
                if (attrs[k].uri == uri && attrs[k].local == an.local) return DECLINE;
            int32_t key = -1;
            if (naming) {
                if (an.attribute_uri == uri) {
                    key = an.attribute_key;
                    if (uri >= 0 && uri != xml_ns && !use(uri)) return NO_MEMORY;
                } else {
                    key = attribute_key(uri, an.local);
                    if (key < 0) return key;
                    qnames[aq].attribute_uri = uri;
                    qnames[aq].attribute_key = key;
                }
                for (int32_t k = first; k < attrs.count; k++) /* one JSON name twice */
                    if (attrs[k].key == key) return DECLINE;
            }
            Attr *at = attrs.push();
            if (at == nullptr) return NO_MEMORY;
            *at = Attr{uri, an.local, key, value, len};
        }
        return 0;
    }

    /* a text piece, checked, onto pieces */
    int32_t piece(const char *v, bool cdata) {
        bool special = false;
        uint32_t n = scan(v, '&', ']', &special);
        if (special && !cdata && !refs_ok(v, false)) return DECLINE;
        Piece *p = pieces.push();
        if (p == nullptr) return NO_MEMORY;
        *p = Piece{v, n, cdata};
        return 0;
    }

    /* a child that is no element: a text or CDATA piece, checked, onto pieces; a comment,
     * checked; anything else (a processing instruction, a DOCTYPE) declined */
    int32_t other_child(xml_node c, pugi::xml_node_type type) {
        if (type == pugi::node_pcdata || type == pugi::node_cdata) return piece(c.value(), type == pugi::node_cdata);
        return type == pugi::node_comment && comment_ok(c.value()) ? 0 : DECLINE;
    }

    /* the children of an element that has no element child: its texts onto pieces */
    int32_t texts(xml_node node) {
        for (xml_node c = node.first_child(); c; c = c.next_sibling()) {
            int32_t r = other_child(c, c.type());
            if (r < 0) return r;
        }
        return 0;
    }

    /* (key_text has 32 bytes of slack after every key: make_key) */
    bool put_key(int32_t key) {
        Key k = keys[key];
        if (!out.reserve(k.len + 32)) return false;
        const char *from = key_text.data + k.at;
        char *to = out.data + out.len;
        if (k.len <= 32) {
            memcpy(to, from, 16);
            memcpy(to + 16, from + 16, 16);
        } else {
            memcpy(to, from, k.len);
        }
        out.len += k.len;
        return true;
    }

    /* a leaf's text (NUL-terminated, in the parsed buffer) as a JSON string, checked as it
     * is written (references, "]]>"): one pass, a word at a time. 0, or DECLINE, NO_MEMORY */
    int32_t put_own_text(const char *s) {
        if (!out.reserve(64)) return NO_MEMORY;
        char *to = out.data + out.len;
        *to++ = '"';
        for (;;) {
            if ((size_t)(out.data + out.cap - to) < 48) { /* room for a word, escaped */
                size_t at = (size_t)(to - out.data);
                out.len = at;
                if (!out.reserve(64)) return NO_MEMORY;
                to = out.data + at;
            }
            uint64_t w = word_at(s);
            memcpy(to, &w, 8);
            uint64_t flags = flags_of(w) | bytes_of(w, ']'); /* (NUL is below 0x20) */
            if (!flags) {
                to += 8, s += 8;
                continue;
            }
            int clean = __builtin_ctzll(flags) >> 3;
            to += clean, s += clean;
            unsigned char c = (unsigned char)*s;
            if (c == 0) break;
            if (c == '&') {
                char decoded[4];
                size_t len;
                size_t used = reference(s, decoded, &len);
                if (used == 0) return DECLINE;
                s += used;
                to = put_decoded(to, decoded, len);
                continue;
            }
            if (c == ']') {
                if (s[1] == ']' && s[2] == '>') return DECLINE;
                *to++ = ']';
            } else {
                to += escape_of(c, to);
            }
            s++;
        }
        *to++ = '"';
        out.len = (size_t)(to - out.data);
        return 0;
    }

    /* the pieces from first on, as one JSON string */
    bool put_string(int32_t first) {
        size_t bound = 18;
        for (int32_t k = first; k < pieces.count; k++) bound += 6 * (size_t)pieces[k].n;
        if (!out.reserve(bound)) return false;
        out.data[out.len++] = '"';
        for (int32_t k = first; k < pieces.count; k++) put_text(out, pieces[k].s, pieces[k].n, !pieces[k].cdata);
        out.data[out.len++] = '"';
        return true;
    }

    /* an element's mixed text (its pieces from first on: its text and its children's
     * tails), joined, decoded and stripped as str.strip() strips, as a #text property if
     * anything is left. DECLINE when a non-ASCII character is at an end (str.isspace() is
     * left to the strict path). */
    int32_t put_mixed(int32_t first) {
        scratch.len = 0;
        for (int32_t k = first; k < pieces.count; k++) {
            const Piece &p = pieces[k];
            if (p.cdata) {
                if (!scratch.put(p.s, p.n)) return NO_MEMORY;
                continue;
            }
            const char *s = p.s, *end = p.s + p.n;
            while (s < end) {
                const char *amp = (const char *)memchr(s, '&', (size_t)(end - s));
                if (amp == nullptr) amp = end;
                if (!scratch.put(s, (size_t)(amp - s))) return NO_MEMORY;
                if (amp == end) break;
                char decoded[4];
                size_t len;
                s = amp + reference(amp, decoded, &len); /* (checked: never 0) */
                if (!scratch.put(decoded, len)) return NO_MEMORY;
            }
        }
        size_t start = 0, end = scratch.len;
        const unsigned char *t = (const unsigned char *)scratch.data;
        auto space = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
        while (start < end && space(t[start])) start++;
        while (end > start && space(t[end - 1])) end--;
        if (start == end) return 0;
        if (t[start] >= 0x80 || t[end - 1] >= 0x80) return DECLINE;
        if (!scratch.reserve(8) || !out.reserve(6 * (end - start) + 16)) return NO_MEMORY; /* (put_text
                                                                  reads a word past the end) */
        if (!out.put(",\"#text\":\"", 10)) return NO_MEMORY;
        put_text(out, scratch.data + start, end - start, false);
        return out.byte('"') ? 0 : NO_MEMORY;
    }

    /* the element children of an element (or of a SOAP Body: top, each declared), written
     * as properties, after a comma if *comma: sibling elements of one key make an array,
     * in document order. A key that comes back after another one is declined (the mapping
     * would join it to its first: the strict path does). Its text pieces onto pieces. */
    int32_t children(xml_node node, int depth, bool top, bool *comma) {
        int32_t seen_base = seen.count;
        int32_t previous = -1;
        size_t previous_start = 0;
        bool in_array = false, first_element = true;
        for (xml_node c = node.first_child(); c; c = c.next_sibling()) {
            pugi::xml_node_type type = c.type();
            if (type != pugi::node_element) {
                int32_t r = other_child(c, type);
                if (r < 0) return r;
                continue;
            }
            Frame f;
            bool plain = !c.first_attribute() && !c.first_child();
            int32_t r = plain ? (depth + 1 > MAX_DEPTH ? DECLINE : name(c, true, f)) : open(c, depth + 1, true, f);
            if (r < 0) return r;
            if (top && first_element && f.uri == soap_ns && f.local == fault_name && soap_ns >= 0)
                return DECLINE; /* a Fault: the strict path raises it */
            first_element = false;
            if (f.key == previous) {
                if (!in_array) { /* the previous value becomes the array's first item */
                    if (!out.reserve(2)) return NO_MEMORY;
                    memmove(out.data + previous_start + 1, out.data + previous_start, out.len - previous_start);
                    out.data[previous_start] = '[';
                    out.len++;
                    in_array = true;
                }
                if (!out.byte(',')) return NO_MEMORY;
            } else {
                if (in_array && !out.byte(']')) return NO_MEMORY;
                in_array = false;
                for (int32_t k = seen_base; k < seen.count; k++)
                    if (seen[k] == f.key) return DECLINE;
                if (seen.count - seen_base >= MAX_ATTRIBUTES) return DECLINE;
                int32_t *at = seen.push();
                if (at == nullptr) return NO_MEMORY;
                *at = f.key;
                if ((*comma && !out.byte(',')) || !put_key(f.key)) return NO_MEMORY;
                *comma = true;
                previous = f.key;
            }
            size_t value_start = out.len; /* (an array item's own, for its declarations) */
            if (!in_array) previous_start = value_start;
            if (plain) {
                const char *own = c.value(); /* (its text, kept in it: parse_embed_pcdata) */
                if (!own[0]) {
                    r = out.put("null", 4) ? 0 : NO_MEMORY;
                } else {
                    r = put_own_text(own);
                }
            } else {
                r = value(c, depth + 1);
                close(f);
            }
            if (r < 0) return r;
            if (top && !declare(value_start)) return NO_MEMORY;
        }
        if (in_array && !out.byte(']')) return NO_MEMORY;
        seen.count = seen_base;
        return 0;
    }

    /* a converted element's value (opened: its name and key are done), written: its text
     * (null when it has none) when it has neither attributes nor children, else an object.
     * 0, or DECLINE, NO_MEMORY */
    int32_t value(xml_node node, int depth) {
        int32_t attrs_base = attrs.count, pieces_base = pieces.count;
        int32_t r = attributes(node, true);
        if (r < 0) return r;
        bool has_children = false;
        for (xml_node c = node.first_child(); c && !has_children; c = c.next_sibling())
            has_children = c.type() == pugi::node_element;
        const char *own = node.value(); /* its first text, kept in it (parse_embed_pcdata) */
        if (own[0] && (r = piece(own, false)) < 0) return r;
        if (!has_children && (r = texts(node)) < 0) return r;
        if (attrs.count == attrs_base && !has_children) { /* a text, or null */
            bool ok = pieces.count == pieces_base ? out.put("null", 4) : put_string(pieces_base);
            pieces.count = pieces_base;
            return ok ? 0 : NO_MEMORY;
        }
        if (!out.byte('{')) return NO_MEMORY;
        bool comma = false;
        for (int32_t k = attrs_base; k < attrs.count; k++) {
            const Attr &a = attrs[k];
            if (!out.reserve(6 * (size_t)a.len + 4) || (comma && !out.byte(',')) || !put_key(a.key) ||
                !out.byte('"'))
                return NO_MEMORY;
            put_text(out, a.value, a.len, true);
            if (!out.byte('"')) return NO_MEMORY;
            comma = true;
        }
        attrs.count = attrs_base;
        if (has_children) {
            r = children(node, depth, false, &comma);
            if (r == 0 && pieces.count > pieces_base) r = put_mixed(pieces_base);
        } else { /* attributes only: its text as it is, if any */
            bool empty = true;
            for (int32_t k = pieces_base; k < pieces.count && empty; k++) empty = pieces[k].n == 0;
            if (!empty && (!out.put(",\"#text\":", 9) || !put_string(pieces_base))) r = NO_MEMORY;
        }
        pieces.count = pieces_base;
        if (r < 0) return r;
        return out.byte('}') ? 0 : NO_MEMORY;
    }

    /* an element outside what is converted (a SOAP envelope's, its Header's...): checked
     * only. The envelope's first Body's children are converted. 0, or DECLINE, NO_MEMORY */
    int32_t check(xml_node node, int depth, Context context, const Frame &f) {
        int32_t attrs_base = attrs.count;
        int32_t r = attributes(node, false);
        attrs.count = attrs_base;
        if (r < 0) return r;
        const char *own = node.value(); /* its first text, kept in it: checked */
        if (own[0]) {
            int32_t base = pieces.count;
            r = piece(own, false);
            pieces.count = base;
            if (r < 0) return r;
        }
        if (context == ENVELOPE_CHILD && !body_seen && f.uri == soap_ns && f.local == body_name) {
            body_seen = true; /* the Body: its children are the answer's properties */
            int32_t pieces_base = pieces.count;
            bool comma = false;
            r = children(node, depth, true, &comma);
            pieces.count = pieces_base;
            return r;
        }
        Context inner = context == ENVELOPE ? ENVELOPE_CHILD : UNNAMED;
        for (xml_node c = node.first_child(); c; c = c.next_sibling()) {
            pugi::xml_node_type type = c.type();
            if (type == pugi::node_element) {
                Frame cf;
                r = open(c, depth + 1, false, cf);
                if (r == 0) r = check(c, depth + 1, inner, cf);
                if (r < 0) return r;
                close(cf);
                continue;
            }
            int32_t base = pieces.count; /* (checked only) */
            r = other_child(c, type);
            pieces.count = base;
            if (r < 0) return r;
        }
        return 0;
    }
};

Bytes WORK, OUT;
Conv CONV(OUT);

/* pugixml's memory: its pages (32 KB) kept from call to call rather than given back to
 * malloc and asked for again on every conversion */
const int KEPT_BLOCKS = 16;
void *kept[KEPT_BLOCKS];
size_t kept_size[KEPT_BLOCKS];
int kept_count = 0;

void *allocate(size_t size) {
    for (int k = kept_count - 1; k >= 0; k--)
        if (kept_size[k] == size) {
            void *block = kept[k];
            kept[k] = kept[kept_count - 1];
            kept_size[k] = kept_size[kept_count - 1];
            kept_count--;
            /* (the size is kept in front of the block: deallocate is not told it) */
            return block;
        }
    size_t *block = (size_t *)malloc(size + 16);
    if (block == nullptr) return nullptr;
    block[0] = size;
    return (char *)block + 16;
}

void deallocate(void *pointer) {
    size_t size = *(size_t *)((char *)pointer - 16);
    if (kept_count < KEPT_BLOCKS && size <= 65536) {
        kept[kept_count] = pointer;
        kept_size[kept_count] = size;
        kept_count++;
        return;
    }
    free((char *)pointer - 16);
}

/* the XML declaration at the start, if any: the length to skip; -1 declined (only
 * version 1.0, UTF-8, standalone yes or no, as written by the usual serialisers) */
Py_ssize_t declaration(const char *s, Py_ssize_t n) {
    if (n < 6 || memcmp(s, "<?xml", 5) != 0) return 0;
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    if (!space(s[5])) return -1; /* (<?xml-stylesheet ...: a processing instruction) */
    const char *p = s + 5, *end = s + n;
    auto pseudo = [&](const char *name, const char *const *allowed, bool required) -> int {
        const char *q = p;
        if (q >= end || !space(*q)) return required ? -1 : 0;
        while (q < end && space(*q)) q++;
        size_t len = strlen(name);
        if (end - q < (Py_ssize_t)len || memcmp(q, name, len) != 0) return required ? -1 : 0;
        q += len;
        while (q < end && space(*q)) q++;
        if (q >= end || *q != '=') return -1;
        q++;
        while (q < end && space(*q)) q++;
        if (q >= end || (*q != '"' && *q != '\'')) return -1;
        char quote = *q++;
        const char *close = (const char *)memchr(q, quote, (size_t)(end - q));
        if (close == nullptr) return -1;
        size_t vlen = (size_t)(close - q);
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strlen(*a) == vlen && strncasecmp(*a, q, vlen) == 0 && (strcmp(name, "encoding") == 0 || memcmp(*a, q, vlen) == 0);
        if (!ok) return -1;
        p = close + 1;
        return 1;
    };
    static const char *const VERSIONS[] = {"1.0", nullptr};
    static const char *const ENCODINGS[] = {"UTF-8", nullptr};
    static const char *const STANDALONE[] = {"yes", "no", nullptr};
    if (pseudo("version", VERSIONS, true) < 0) return -1;
    if (pseudo("encoding", ENCODINGS, false) < 0) return -1;
    if (pseudo("standalone", STANDALONE, false) < 0) return -1;
    while (p < end && space(*p)) p++;
    if (end - p < 2 || p[0] != '?' || p[1] != '>') return -1;
    return p + 2 - s;
}

const unsigned PARSE_FLAGS = pugi::parse_cdata | pugi::parse_comments | pugi::parse_pi |
                             pugi::parse_declaration | pugi::parse_doctype | pugi::parse_ws_pcdata |
                             pugi::parse_eol | pugi::parse_wconv_attribute | pugi::parse_fragment |
                             pugi::parse_embed_pcdata;

/* the conversion, or NULL: declined (nothing raised) or out of memory (raised) */
PyObject *convert(const char *data, Py_ssize_t size, int style, const char *soap, int *declined) {
    *declined = 1;
    if (size == 0 || size > MAX_SIZE) return nullptr;
    Py_ssize_t skip = declaration(data, size);
    if (skip < 0) return nullptr;
    /* a copy to parse in place, with slack: the word-at-a-time loops read past a text */
    WORK.len = 0;
    if (!WORK.reserve((size_t)size + 16)) goto no_memory;
    if (!xml_chars((const unsigned char *)data, (size_t)size, (unsigned char *)WORK.data)) return nullptr;
    memset(WORK.data + size, 0, 16);
    {
        size_t n = (size_t)(size - skip);
        pugi::xml_document doc;
        pugi::xml_parse_result parsed =
            doc.load_buffer_inplace(WORK.data + skip, n + 1, PARSE_FLAGS, pugi::encoding_utf8);
        if (!parsed) return nullptr;
        Conv &c = CONV;
        if (!c.reset(style, soap)) goto no_memory;
        xml_node root;
        for (xml_node k = doc.first_child(); k; k = k.next_sibling()) {
            pugi::xml_node_type type = k.type();
            if (type == pugi::node_element) {
                if (root) return nullptr; /* a second root */
                root = k;
            } else if (type == pugi::node_pcdata) {
                for (const char *v = k.value(); *v; v++)
                    if (*v != ' ' && *v != '\t' && *v != '\n' && *v != '\r') return nullptr;
            } else if (type != pugi::node_comment || !Conv::comment_ok(k.value())) {
                return nullptr;
            }
        }
        if (!root) return nullptr;
        Frame f;
        int32_t r;
        if (!soap[0]) { /* {"root": its value, declarations first} */
            r = c.open(root, 1, true, f);
            if (r == 0) r = OUT.byte('{') && c.put_key(f.key) ? 0 : NO_MEMORY;
            size_t value_start = OUT.len;
            if (r == 0) r = c.value(root, 1);
            if (r == 0) r = c.declare(value_start) && OUT.byte('}') ? 0 : NO_MEMORY;
        } else { /* the Body's children as one object, each with its declarations */
            r = c.open(root, 1, false, f);
            if (r == 0 && !(f.uri == c.soap_ns && f.local == c.envelope_name)) r = DECLINE;
            if (r == 0) r = OUT.byte('{') ? 0 : NO_MEMORY;
            if (r == 0) r = c.check(root, 1, ENVELOPE, f);
            if (r == 0 && !c.body_seen) r = DECLINE; /* (no Body: the strict path's refusal) */
            if (r == 0) r = OUT.byte('}') ? 0 : NO_MEMORY;
        }
        if (r == NO_MEMORY) goto no_memory;
        if (r < 0) return nullptr;
        *declined = 0;
        return PyBytes_FromStringAndSize(OUT.data, (Py_ssize_t)OUT.len);
    }
no_memory:
    *declined = 0;
    return PyErr_NoMemory();
}

}  // namespace

extern "C" PyObject *xml_fast_to_json(const char *data, Py_ssize_t size, int style, const char *soap,
                                      int *declined) {
    static bool ready = false;
    if (!ready) {
        name_tables();
        pugi::set_memory_management_functions(allocate, deallocate);
        ready = true;
    }
    PyObject *result = convert(data, size, style, soap, declined);
    const size_t keep = 1 << 20;
    WORK.trim(keep);
    OUT.trim(keep);
    CONV.scratch.trim(keep);
    return result;
}
