// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_IO_PARTICLE_FILE_HPP
#define KFMM_IO_PARTICLE_FILE_HPP

// Particle files, read and written on the host. Two formats, chosen by the file name's
// extension unless a format is given explicitly (docs/CLI.md has both byte by byte):
//
//   .csv   text: the header line "x,y,z,q" (or "x,y,z,q,phi,gx,gy,gz" for results), then one
//          record per line; spaces and tabs around fields, CRLF line ends and blank lines at
//          the end are accepted, nothing else.
//   .kfmm  little-endian binary: the 8 bytes "KFMMPART", uint32 version (1), uint32 number
//          of columns (4 or 8), uint64 number of records, then the records, each its columns
//          as float64, record after record.
//
// Every problem with a file throws kfmm::io::FileError, a kfmm::Exception whose one-line
// message names the file and the line (CSV) or record and byte offset (binary). Large files
// show their progress on stderr (kfmm/io/Progress.hpp).

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/io/Progress.hpp>
#include <kfmm/io/TemporaryFiles.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

// Floating-point std::from_chars/std::to_chars are locale-independent and several times faster
// than strtod/snprintf; standard libraries without them fall back to the C functions (which
// -DKFMM_IO_FLOAT_CHARCONV=0 selects anyway, to test them).
#if !defined(KFMM_IO_FLOAT_CHARCONV)
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
#define KFMM_IO_FLOAT_CHARCONV 1
#else
#define KFMM_IO_FLOAT_CHARCONV 0
#endif
#endif

namespace kfmm::io
{

/// A particle file that cannot be read or written; the message names the file and where in
/// it the problem is.
class FileError : public Exception
{
public:
  using Exception::Exception;
};

enum class Format
{
  automatic, ///< from the file name: ".csv" is csv, ".kfmm" is binary
  csv,
  binary
};

inline char const *formatName(Format f)
{
  switch (f)
  {
  case Format::automatic: return "automatic";
  case Format::csv: return "csv";
  case Format::binary: return "binary";
  }
  return "?";
}

/// Number of columns of a particle set (x, y, z, q) and of a result set (the same plus the
/// potential and the three field components).
constexpr int particle_columns = 4;
constexpr int result_columns = 8;

inline char const *columnName(int c)
{
  constexpr char const *names[result_columns] = {"x", "y", "z", "q", "phi", "gx", "gy", "gz"};
  return c >= 0 && c < result_columns ? names[c] : "?";
}

/// The binary format's fixed header.
constexpr char binary_magic[8] = {'K', 'F', 'M', 'M', 'P', 'A', 'R', 'T'};
constexpr std::uint32_t binary_version = 1;
constexpr std::size_t binary_header_bytes = 24;

/// The format a file name asks for: `requested` unless it is Format::automatic, else the
/// extension (case-insensitive). Throws FileError("<where>: ...") for an unknown extension.
inline Format formatOf(std::string const &path, Format requested = Format::automatic,
                       std::string const &where = "kfmm::io::formatOf")
{
  if (requested != Format::automatic)
    return requested;
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".csv")
    return Format::csv;
  if (extension == ".kfmm")
    return Format::binary;
  throw FileError(where + ": '" + path + "': unknown file extension" +
                  (extension.empty() ? std::string() : " '" + extension + "'") +
                  " (expected .csv or .kfmm)");
}

/// Records of a particle file, as read: `columns` float64 values per record, record after
/// record, plus where they came from (for messages about a record).
struct ParticleTable
{
  int columns = particle_columns;
  std::vector<double> values;
  std::string path;
  Format format = Format::csv;

  std::size_t size() const { return values.size() / static_cast<std::size_t>(columns); }
  double operator()(std::size_t record, int column) const
  {
    return values[record * static_cast<std::size_t>(columns) + column];
  }

  /// "'f.csv' line 12" or "'f.kfmm' record 10 (byte offset 664)" (records count from 0; a
  /// CSV record is on line record + 2, as blank lines are allowed only at the end).
  std::string location(std::size_t record) const
  {
    if (format == Format::csv)
      return "'" + path + "' line " + std::to_string(record + 2);
    return "'" + path + "' record " + std::to_string(record) + " (byte offset " +
           std::to_string(binary_header_bytes + record * 8 * static_cast<std::size_t>(columns)) +
           ")";
  }
};

struct ReadOptions
{
  Format format = Format::automatic;
  /// Progress on stderr for files of at least progress_bytes.
  bool progress = true;
  std::uint64_t progress_bytes = std::uint64_t(16) << 20;
};

struct WriteOptions
{
  Format format = Format::automatic;
  /// Progress on stderr when the binary payload would be at least progress_bytes.
  bool progress = true;
  std::uint64_t progress_bytes = std::uint64_t(16) << 20;
};

namespace detail
{

/// A piece of a file as shown in a one-line message: at most 40 characters, anything but
/// printable ASCII as '?'.
inline std::string excerpt(char const *begin, char const *end)
{
  std::string s;
  for (char const *p = begin; p < end && s.size() < 40; ++p)
    s += (*p >= 0x20 && *p < 0x7f) ? *p : '?';
  if (end - begin > 40)
    s += "...";
  return s;
}

inline bool isBlank(char c) { return c == ' ' || c == '\t'; }

inline void trim(char const *&begin, char const *&end)
{
  while (begin < end && isBlank(*begin))
    ++begin;
  while (end > begin && isBlank(end[-1]))
    --end;
}

enum class NumberStatus
{
  ok,
  not_a_number,
  out_of_range
};

/// Parses all of [begin, end) as one decimal number; an optional leading '+' is accepted.
inline NumberStatus parseNumber(char const *begin, char const *end, double &value)
{
  if (begin < end && *begin == '+' && end - begin > 1 && begin[1] != '-' && begin[1] != '+')
    ++begin;
  if (begin == end)
    return NumberStatus::not_a_number;
#if KFMM_IO_FLOAT_CHARCONV
  auto const [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range)
    return NumberStatus::out_of_range;
  return ec == std::errc() && ptr == end ? NumberStatus::ok : NumberStatus::not_a_number;
#else
  // strtod also reads hexadecimal numbers, which the format does not allow.
  char buffer[128];
  if (end - begin >= static_cast<std::ptrdiff_t>(sizeof(buffer)) ||
      std::find_if(begin, end, [](char c) { return c == 'x' || c == 'X'; }) != end)
    return NumberStatus::not_a_number;
  std::memcpy(buffer, begin, end - begin);
  buffer[end - begin] = '\0';
  char *stop = nullptr;
  errno = 0;
  value = std::strtod(buffer, &stop);
  if (stop != buffer + (end - begin) || isBlank(buffer[0]))
    return NumberStatus::not_a_number;
  return errno == ERANGE && std::abs(value) > 1 ? NumberStatus::out_of_range : NumberStatus::ok;
#endif
}

/// Writes `value` as printf's "%.<digits>g" would; returns the end of what was written.
inline char *formatNumber(char *out, double value, int digits)
{
#if KFMM_IO_FLOAT_CHARCONV
  return std::to_chars(out, out + 32, value, std::chars_format::general, digits).ptr;
#else
  return out + std::snprintf(out, 32, "%.*g", digits, value);
#endif
}

inline std::uint64_t loadU64(unsigned char const *p)
{
  std::uint64_t v = 0;
  for (int b = 7; b >= 0; --b)
    v = (v << 8) | p[b];
  return v;
}

inline std::uint32_t loadU32(unsigned char const *p)
{
  std::uint32_t v = 0;
  for (int b = 3; b >= 0; --b)
    v = (v << 8) | p[b];
  return v;
}

inline void storeU64(unsigned char *p, std::uint64_t v)
{
  for (int b = 0; b < 8; ++b, v >>= 8)
    p[b] = static_cast<unsigned char>(v & 0xff);
}

inline void storeU32(unsigned char *p, std::uint32_t v)
{
  for (int b = 0; b < 4; ++b, v >>= 8)
    p[b] = static_cast<unsigned char>(v & 0xff);
}

inline double loadF64(unsigned char const *p)
{
  std::uint64_t const bits = loadU64(p);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

inline void storeF64(unsigned char *p, double v)
{
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof v);
  storeU64(p, bits);
}

struct FileCloser
{
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using FilePointer = std::unique_ptr<std::FILE, FileCloser>;

inline std::string errnoText(int error) { return std::strerror(error); }

/// Line-by-line parser of the CSV format; lines are fed in order without their '\n'.
class CsvParser
{
public:
  CsvParser(std::string const &where, ParticleTable &table) : where_(where), table_(table) {}

  void line(char const *begin, char const *end)
  {
    ++line_;
    if (end > begin && end[-1] == '\r')
      --end;
    // A UTF-8 byte order mark, as spreadsheet programs write, is not part of the header.
    if (line_ == 1 && end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0)
      begin += 3;
    char const *b = begin, *e = end;
    trim(b, e);
    if (b == e)
    {
      if (first_blank_ == 0)
        first_blank_ = line_;
      return;
    }
    if (first_blank_ != 0)
      fail(first_blank_, "blank line (blank lines are allowed only at the end of the file)");
    if (table_.columns == 0)
      header(begin, end);
    else
      record(begin, end);
  }

  /// After the last line: a file without a header is empty.
  void finish()
  {
    if (table_.columns == 0)
      throw FileError(where_ + ": '" + table_.path +
                      "': empty file (expected the header line 'x,y,z,q')");
  }

private:
  [[noreturn]] void fail(std::uint64_t line, std::string const &what) const
  {
    throw FileError(where_ + ": '" + table_.path + "' line " + std::to_string(line) + ": " + what);
  }

  void header(char const *begin, char const *end)
  {
    std::vector<std::string> names;
    for (char const *p = begin;;)
    {
      char const *comma = static_cast<char const *>(std::memchr(p, ',', end - p));
      char const *stop = comma ? comma : end;
      char const *b = p, *e = stop;
      trim(b, e);
      names.emplace_back(b, e);
      if (!comma)
        break;
      p = comma + 1;
    }
    for (int columns : {particle_columns, result_columns})
    {
      bool match = static_cast<int>(names.size()) == columns;
      for (int c = 0; match && c < columns; ++c)
        match = names[c] == columnName(c);
      if (match)
      {
        table_.columns = columns;
        return;
      }
    }
    fail(line_,
         "bad header '" + excerpt(begin, end) + "' (expected 'x,y,z,q' or 'x,y,z,q,phi,gx,gy,gz')");
  }

  void record(char const *begin, char const *end)
  {
    int const columns = table_.columns;
    auto const fields = 1 + std::count(begin, end, ',');
    if (fields != columns)
      fail(line_, "expected " + std::to_string(columns) + " fields (" +
                      (columns == particle_columns ? "x,y,z,q" : "x,y,z,q,phi,gx,gy,gz") +
                      "), found " + std::to_string(fields));
    char const *p = begin;
    for (int c = 0; c < columns; ++c)
    {
      char const *comma = static_cast<char const *>(std::memchr(p, ',', end - p));
      char const *stop = comma ? comma : end;
      char const *b = p, *e = stop;
      trim(b, e);
      // Built only for a message: a string per field would dominate the parsing time.
      auto const name = [c] {
        return "field " + std::to_string(c + 1) + " (" + columnName(c) + ")";
      };
      double value = 0;
      switch (parseNumber(b, e, value))
      {
      case NumberStatus::ok: break;
      case NumberStatus::not_a_number:
        if (b == e)
          fail(line_, name() + " is empty");
        fail(line_, name() + " '" + excerpt(b, e) + "' is not a number");
      case NumberStatus::out_of_range:
        fail(line_, name() + " '" + excerpt(b, e) + "' is out of the range of double");
      }
      if (!std::isfinite(value))
        fail(line_, name() + " '" + excerpt(b, e) + "' is NaN or infinite");
      table_.values.push_back(value);
      p = stop + 1;
    }
  }

  std::string const &where_;
  ParticleTable &table_;
  std::uint64_t line_ = 0;
  std::uint64_t first_blank_ = 0;
};

/// Reads the CSV format in blocks of 1 MiB, parsing whole lines in place.
inline void readCsv(std::FILE *file, std::int64_t size, std::string const &where,
                    ReadOptions const &options, ParticleTable &table)
{
  constexpr std::size_t block = std::size_t(1) << 20;
  table.columns = 0; // until the header is read
  CsvParser parser(where, table);
  Progress progress("reading " + table.path, static_cast<double>(size),
                    options.progress && size >= 0 &&
                        static_cast<std::uint64_t>(size) >= options.progress_bytes);
  if (size > 0)
    // A number takes about 20 bytes of text; reserving saves most regrowth copies.
    table.values.reserve(static_cast<std::size_t>(size / 20));
  std::vector<char> buffer(block);
  std::size_t filled = 0;
  std::uint64_t consumed = 0;
  for (;;)
  {
    if (filled == buffer.size())
      throw FileError(where + ": '" + table.path + "' byte offset " + std::to_string(consumed) +
                      ": a line longer than 1 MiB (is this a CSV file?)");
    std::size_t const got = std::fread(buffer.data() + filled, 1, buffer.size() - filled, file);
    if (got == 0 && std::ferror(file))
      throw FileError(where + ": cannot read '" + table.path + "': " + errnoText(errno));
    filled += got;
    char const *const begin = buffer.data();
    char const *const end = begin + filled;
    char const *p = begin;
    for (;;)
    {
      char const *newline = static_cast<char const *>(std::memchr(p, '\n', end - p));
      if (!newline)
        break;
      parser.line(p, newline);
      p = newline + 1;
    }
    if (got == 0)
    {
      if (p < end) // the last line has no '\n'
        parser.line(p, end);
      break;
    }
    consumed += static_cast<std::uint64_t>(p - begin);
    progress.update(static_cast<double>(consumed));
    filled = static_cast<std::size_t>(end - p);
    std::memmove(buffer.data(), p, filled);
  }
  parser.finish();
  progress.finish();
}

/// Reads the binary format; `size` < 0 when the file's size is not known in advance.
inline void readBinary(std::FILE *file, std::int64_t size, std::string const &where,
                       ReadOptions const &options, ParticleTable &table)
{
  std::string const name = "'" + table.path + "'";
  auto const fail = [&](std::uint64_t offset, std::string const &what) {
    throw FileError(where + ": " + name + " byte offset " + std::to_string(offset) + ": " + what);
  };
  unsigned char header[binary_header_bytes];
  std::size_t const got = std::fread(header, 1, sizeof header, file);
  if (got < sizeof header && std::ferror(file))
    throw FileError(where + ": cannot read " + name + ": " + errnoText(errno));
  if (got == 0)
    throw FileError(where + ": " + name + ": empty file (expected a kfmm binary particle file)");
  if (std::memcmp(header, binary_magic, std::min<std::size_t>(got, 8)) != 0)
    fail(0, "bad magic '" +
                excerpt(reinterpret_cast<char const *>(header),
                        reinterpret_cast<char const *>(header) + std::min<std::size_t>(got, 8)) +
                "' (expected 'KFMMPART'): not a kfmm binary particle file");
  if (got < sizeof header)
    fail(got, "truncated header (" + std::to_string(got) + " of " +
                  std::to_string(binary_header_bytes) + " bytes)");
  std::uint32_t const version = loadU32(header + 8);
  std::uint32_t const columns = loadU32(header + 12);
  std::uint64_t const count = loadU64(header + 16);
  if (version != binary_version)
    fail(8, "unsupported version " + std::to_string(version) + " (expected " +
                std::to_string(binary_version) + ")");
  if (columns != particle_columns && columns != result_columns)
    fail(12, "unsupported column count " + std::to_string(columns) +
                 " (expected 4 for x,y,z,q or 8 for x,y,z,q,phi,gx,gy,gz)");
  std::uint64_t const record_bytes = 8 * std::uint64_t(columns);
  auto const recordOffset = [&](std::uint64_t record) {
    return binary_header_bytes + record * record_bytes;
  };
  auto const truncated = [&](std::uint64_t complete, std::uint64_t file_bytes) {
    fail(file_bytes, "truncated in record " + std::to_string(complete) + " (the header promises " +
                         std::to_string(count) + " records of " + std::to_string(record_bytes) +
                         " bytes; the file ends after " + std::to_string(complete) +
                         " complete records)");
  };
  // The header's count is checked against the file's size before anything is allocated, so
  // that a damaged count fails cleanly instead of asking for terabytes.
  std::uint64_t const max_count =
      (std::numeric_limits<std::uint64_t>::max() - binary_header_bytes) / record_bytes;
  if (count > max_count)
    fail(16, "record count " + std::to_string(count) + " is impossibly large");
  if (size >= 0)
  {
    std::uint64_t const payload = static_cast<std::uint64_t>(size) - binary_header_bytes;
    if (payload < count * record_bytes)
      truncated(payload / record_bytes, static_cast<std::uint64_t>(size));
    if (payload > count * record_bytes)
      fail(16, "count mismatch: the header promises " + std::to_string(count) + " records (" +
                   std::to_string(count * record_bytes) +
                   " bytes after the header), the file holds " + std::to_string(payload) +
                   " bytes after the header");
  }
  table.columns = static_cast<int>(columns);
  std::uint64_t const values = count * columns;
  if (values > table.values.max_size())
    fail(16, "record count " + std::to_string(count) + " is too large for this machine");
  try
  {
    table.values.resize(static_cast<std::size_t>(values));
  }
  catch (std::bad_alloc const &)
  {
    fail(16, "not enough memory for " + std::to_string(count) + " records");
  }

  Progress progress("reading " + table.path, static_cast<double>(size),
                    options.progress && size >= 0 &&
                        static_cast<std::uint64_t>(size) >= options.progress_bytes);
  std::size_t const block_records = std::max<std::size_t>(1, (std::size_t(1) << 20) / record_bytes);
  std::vector<unsigned char> buffer(block_records * record_bytes);
  for (std::uint64_t first = 0; first < count;)
  {
    std::size_t const records =
        static_cast<std::size_t>(std::min<std::uint64_t>(block_records, count - first));
    std::size_t const bytes = records * record_bytes;
    std::size_t const read = std::fread(buffer.data(), 1, bytes, file);
    if (read < bytes)
    {
      if (std::ferror(file))
        throw FileError(where + ": cannot read " + name + ": " + errnoText(errno));
      truncated(first + read / record_bytes, recordOffset(first) + read);
    }
    double *const out = table.values.data() + first * columns;
    for (std::size_t k = 0; k < records * columns; ++k)
    {
      double const v = loadF64(buffer.data() + 8 * k);
      if (!std::isfinite(v))
      {
        std::uint64_t const record = first + k / columns;
        throw FileError(where + ": " + name + " record " + std::to_string(record) +
                        " (byte offset " +
                        std::to_string(recordOffset(record) + 8 * (k % columns)) + "): column '" +
                        columnName(static_cast<int>(k % columns)) + "' is NaN or infinite");
      }
      out[k] = v;
    }
    first += records;
    progress.update(static_cast<double>(recordOffset(first)));
  }
  if (size < 0 && std::fgetc(file) != EOF)
    fail(recordOffset(count), "count mismatch: the file continues after the " +
                                  std::to_string(count) + " records its header promises");
  progress.finish();
}

/// The file that writing `path` replaces: `path` itself, or the file a symbolic link there
/// names (the link stays and shows the new contents).
inline std::string writtenThrough(std::string const &path)
{
  std::error_code ec;
  std::filesystem::path const p(path);
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec)))
    return path;
  if (std::filesystem::exists(p, ec))
    return std::filesystem::canonical(p, ec).string();
  // A link to a file not yet there: the file it names, relative to the link's folder.
  auto target = std::filesystem::read_symlink(p, ec);
  if (ec)
    return path;
  if (target.is_relative())
    target = p.parent_path() / target;
  return target.string();
}

/// An output file written under a temporary name next to it and renamed over `path` only when
/// complete, so that a failed run never leaves a partial or stale-looking file behind. Through
/// a symbolic link, the file it names is replaced. The temporary file is removed on every
/// failure, and by removeTemporaryFiles() on a signal (io/TemporaryFiles.hpp).
class OutputFile
{
public:
  OutputFile(std::string const &path, std::string const &where)
      : path_(path), where_(where), target_(writtenThrough(path))
  {
    // Unique enough for concurrent runs writing next to each other; the name is removed on
    // every failure path.
    auto const stamp =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp%08llx",
                  static_cast<unsigned long long>((stamp ^ reinterpret_cast<std::uintptr_t>(this)) &
                                                  0xffffffffULL));
    temporary_ = target_ + suffix;
    detail::rememberTemporaryFile(temporary_.c_str());
    file_.reset(std::fopen(temporary_.c_str(), "wb"));
    if (!file_)
    {
      int const error = errno;
      detail::forgetTemporaryFile(temporary_.c_str());
      throw FileError(where_ + ": cannot create '" + path_ + "': " + errnoText(error));
    }
  }

  OutputFile(OutputFile const &) = delete;
  OutputFile &operator=(OutputFile const &) = delete;

  ~OutputFile()
  {
    if (file_)
    {
      file_.reset();
      std::remove(temporary_.c_str());
    }
    detail::forgetTemporaryFile(temporary_.c_str());
  }

  void write(void const *data, std::size_t bytes)
  {
    if (bytes > 0 && std::fwrite(data, 1, bytes, file_.get()) != bytes)
      throw FileError(where_ + ": cannot write '" + path_ + "': " + errnoText(errno));
  }

  /// Closes the file and gives it its name.
  void commit()
  {
    std::FILE *f = file_.release();
    if (std::fclose(f) != 0)
    {
      int const error = errno;
      std::remove(temporary_.c_str());
      throw FileError(where_ + ": cannot write '" + path_ + "': " + errnoText(error));
    }
    std::error_code ec;
    std::filesystem::rename(temporary_, target_, ec);
    if (ec)
    {
      std::remove(temporary_.c_str());
      throw FileError(where_ + ": cannot create '" + path_ + "': " + ec.message());
    }
  }

private:
  std::string path_;
  std::string where_;
  std::string target_; ///< path_, or the file a symbolic link there names
  std::string temporary_;
  FilePointer file_;
};

/// Fills `out` with records first .. first + count - 1, `columns` values each.
using RecordSource = std::function<void(std::size_t first, std::size_t count, double *out)>;

/// Writes `n` records of `columns` values; column c of the CSV format with digits[c]
/// significant digits (17 round-trips a double, 9 a float).
inline void writeRecords(std::string const &path, std::size_t n, int columns, int const *digits,
                         RecordSource const &source, WriteOptions const &options,
                         std::string const &where)
{
  Format const format = formatOf(path, options.format, where);
  constexpr std::size_t block = 4096;
  std::vector<double> values(block * columns);
  std::uint64_t const record_bytes = 8 * std::uint64_t(columns);
  Progress progress("writing " + path, static_cast<double>(n),
                    options.progress && n * record_bytes >= options.progress_bytes);
  OutputFile file(path, where);
  if (format == Format::csv)
  {
    std::string const header = columns == particle_columns ? "x,y,z,q\n" : "x,y,z,q,phi,gx,gy,gz\n";
    file.write(header.data(), header.size());
    // A number takes at most 24 characters at 17 digits; a separator follows each.
    std::vector<char> text(block * columns * 26);
    for (std::size_t first = 0; first < n; first += block)
    {
      std::size_t const count = std::min(block, n - first);
      source(first, count, values.data());
      char *out = text.data();
      for (std::size_t k = 0; k < count * columns; ++k)
      {
        int const c = static_cast<int>(k % columns);
        out = formatNumber(out, values[k], digits[c]);
        *out++ = c + 1 == columns ? '\n' : ',';
      }
      file.write(text.data(), static_cast<std::size_t>(out - text.data()));
      progress.update(static_cast<double>(first + count));
    }
  }
  else
  {
    unsigned char header[binary_header_bytes];
    std::memcpy(header, binary_magic, 8);
    storeU32(header + 8, binary_version);
    storeU32(header + 12, static_cast<std::uint32_t>(columns));
    storeU64(header + 16, n);
    file.write(header, sizeof header);
    std::vector<unsigned char> bytes(block * record_bytes);
    for (std::size_t first = 0; first < n; first += block)
    {
      std::size_t const count = std::min(block, n - first);
      source(first, count, values.data());
      for (std::size_t k = 0; k < count * columns; ++k)
        storeF64(bytes.data() + 8 * k, values[k]);
      file.write(bytes.data(), count * record_bytes);
      progress.update(static_cast<double>(first + count));
    }
  }
  file.commit();
  progress.finish();
}

template <class View>
constexpr int digitsOf()
{
  return std::numeric_limits<typename View::non_const_value_type>::max_digits10;
}

template <class View, int Rank>
constexpr void assertHostView()
{
  static_assert(Kokkos::is_view<View>::value, "kfmm::io: particle data must be Kokkos Views");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace,
                                           typename View::memory_space>::accessible,
                "kfmm::io: Views must be host-accessible (copy device Views to a host mirror)");
  static_assert(static_cast<int>(View::rank) == Rank,
                "kfmm::io: positions and field must be N x 3, charges and potential N long");
}

inline void requireRows(std::string const &where, std::string const &name, std::size_t actual,
                        std::size_t expected)
{
  if (actual != expected)
    throw Exception(where + ": argument '" + name + "' has extent " + std::to_string(actual) +
                    ", expected " + std::to_string(expected));
}

} // namespace detail

/// Reads a particle file (CSV or binary, by extension unless `options.format` says): x, y, z, q
/// and, for a result file, phi, gx, gy, gz. Throws FileError naming the file and the line or
/// byte offset of the first problem: a missing or unreadable file, an empty file, a bad
/// header, a non-numeric or empty field, a wrong number of fields, a NaN or infinite value, a
/// truncated or over-long binary file, a bad magic number or version.
inline ParticleTable readParticles(std::string const &path, ReadOptions const &options = {})
{
  std::string const where = "kfmm::io::readParticles";
  ParticleTable table;
  table.path = path;
  table.format = formatOf(path, options.format, where);
  std::error_code ec;
  auto const status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw FileError(where + ": cannot read '" + path + "': it is a directory");
  detail::FilePointer file(std::fopen(path.c_str(), "rb"));
  if (!file)
    throw FileError(where + ": cannot open '" + path + "': " + detail::errnoText(errno));
  std::int64_t size = -1;
  if (std::filesystem::is_regular_file(status))
  {
    auto const bytes = std::filesystem::file_size(path, ec);
    if (!ec)
      size = static_cast<std::int64_t>(bytes);
  }
  if (table.format == Format::csv)
    detail::readCsv(file.get(), size, where, options, table);
  else
    detail::readBinary(file.get(), size, where, options, table);
  return table;
}

/// Writes a particle set: x, y, z, q from host Views `positions` (N x 3) and `charges` (N).
template <class Positions, class Charges>
void writeParticles(std::string const &path, Positions const &positions, Charges const &charges,
                    WriteOptions const &options = {})
{
  std::string const where = "kfmm::io::writeParticles";
  detail::assertHostView<Positions, 2>();
  detail::assertHostView<Charges, 1>();
  std::size_t const n = positions.extent(0);
  detail::requireRows(where, "positions (columns)", positions.extent(1), 3);
  detail::requireRows(where, "charges", charges.extent(0), n);
  int const digits[particle_columns] = {detail::digitsOf<Positions>(),
                                        detail::digitsOf<Positions>(),
                                        detail::digitsOf<Positions>(), detail::digitsOf<Charges>()};
  detail::writeRecords(
      path, n, particle_columns, digits,
      [&](std::size_t first, std::size_t count, double *out) {
        for (std::size_t i = first; i < first + count; ++i, out += particle_columns)
        {
          out[0] = static_cast<double>(positions(i, 0));
          out[1] = static_cast<double>(positions(i, 1));
          out[2] = static_cast<double>(positions(i, 2));
          out[3] = static_cast<double>(charges(i));
        }
      },
      options, where);
}

/// Writes a result set: x, y, z, q, phi, gx, gy, gz from host Views (N x 3, N, N, N x 3).
/// CSV numbers have the digits that round-trip their View's type (%.17g double, %.9g float);
/// the binary format stores float64 whatever the type.
template <class Positions, class Charges, class Potential, class Field>
void writeResults(std::string const &path, Positions const &positions, Charges const &charges,
                  Potential const &potential, Field const &field, WriteOptions const &options = {})
{
  std::string const where = "kfmm::io::writeResults";
  detail::assertHostView<Positions, 2>();
  detail::assertHostView<Charges, 1>();
  detail::assertHostView<Potential, 1>();
  detail::assertHostView<Field, 2>();
  std::size_t const n = positions.extent(0);
  detail::requireRows(where, "positions (columns)", positions.extent(1), 3);
  detail::requireRows(where, "charges", charges.extent(0), n);
  detail::requireRows(where, "potential", potential.extent(0), n);
  detail::requireRows(where, "field", field.extent(0), n);
  detail::requireRows(where, "field (columns)", field.extent(1), 3);
  int const x = detail::digitsOf<Positions>(), g = detail::digitsOf<Field>();
  int const digits[result_columns] = {
      x, x, x, detail::digitsOf<Charges>(), detail::digitsOf<Potential>(), g, g, g};
  detail::writeRecords(
      path, n, result_columns, digits,
      [&](std::size_t first, std::size_t count, double *out) {
        for (std::size_t i = first; i < first + count; ++i, out += result_columns)
        {
          for (int c = 0; c < 3; ++c)
          {
            out[c] = static_cast<double>(positions(i, c));
            out[5 + c] = static_cast<double>(field(i, c));
          }
          out[3] = static_cast<double>(charges(i));
          out[4] = static_cast<double>(potential(i));
        }
      },
      options, where);
}

/// Writes a table as read (all its columns, 17 digits in CSV).
inline void writeTable(std::string const &path, ParticleTable const &table,
                       WriteOptions const &options = {})
{
  int const digits[result_columns] = {17, 17, 17, 17, 17, 17, 17, 17};
  int const columns = table.columns;
  detail::writeRecords(
      path, table.size(), columns, digits,
      [&](std::size_t first, std::size_t count, double *out) {
        std::copy_n(table.values.data() + first * columns, count * columns, out);
      },
      options, "kfmm::io::writeTable");
}

/// Copies the table's x, y, z, q into `positions` (N x 3) and `charges` (N), Views of any
/// memory space (contiguous), converting to their value type. Throws FileError naming the
/// record when a value does not fit that type (a double beyond float's range).
template <class Positions, class Charges>
void copyToViews(ParticleTable const &table, Positions const &positions, Charges const &charges)
{
  std::string const where = "kfmm::io::copyToViews";
  std::size_t const n = table.size();
  detail::requireRows(where, "positions", positions.extent(0), n);
  detail::requireRows(where, "positions (columns)", positions.extent(1), 3);
  detail::requireRows(where, "charges", charges.extent(0), n);
  using Real = typename Positions::non_const_value_type;
  using Charge = typename Charges::non_const_value_type;
  auto positions_h = Kokkos::create_mirror_view(positions);
  auto charges_h = Kokkos::create_mirror_view(charges);
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < particle_columns; ++c)
    {
      double const v = table(i, c);
      // Checked before the conversion: converting an out-of-range double is undefined.
      double const limit = c < 3 ? static_cast<double>(std::numeric_limits<Real>::max())
                                 : static_cast<double>(std::numeric_limits<Charge>::max());
      if (!(std::abs(v) <= limit))
        throw FileError(where + ": " + table.location(i) + ": " + columnName(c) + " = " +
                        kfmm::detail::formatNumber(v) +
                        (std::isfinite(v) ? " does not fit in float (use double precision)"
                                          : " is NaN or infinite"));
      if (c < 3)
        positions_h(i, c) = static_cast<Real>(v);
      else
        charges_h(i) = static_cast<Charge>(v);
    }
  Kokkos::deep_copy(positions, positions_h);
  Kokkos::deep_copy(charges, charges_h);
}

} // namespace kfmm::io

#endif
