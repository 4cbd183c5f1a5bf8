// SPDX-License-Identifier: BSD-3-Clause
// Particle files: what the writers write reads back exactly, the CSV variants the format
// allows are read, and every kind of bad file gives a FileError naming the file and where.
#include <kfmm/io/ParticleFile.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>

#include "TestTypes.hpp"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;
namespace io = kfmm::io;

namespace
{

/// A scratch folder, removed with everything in it at the end of the test.
struct ScratchFolder
{
  fs::path path;

  ScratchFolder()
  {
    auto const stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() / ("kfmm_test_io_" + std::to_string(stamp));
    fs::create_directories(path);
  }
  ~ScratchFolder()
  {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(std::string const &name) const { return (path / name).string(); }
};

void writeBytes(std::string const &path, std::string const &bytes)
{
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(std::string const &path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A binary file's header followed by `records` x `columns` doubles of value `fill`.
std::string binaryFile(std::uint32_t version, std::uint32_t columns, std::uint64_t count,
                       std::size_t records, double fill = 0.5)
{
  unsigned char header[io::binary_header_bytes];
  std::memcpy(header, io::binary_magic, 8);
  io::detail::storeU32(header + 8, version);
  io::detail::storeU32(header + 12, columns);
  io::detail::storeU64(header + 16, count);
  std::string bytes(reinterpret_cast<char const *>(header), sizeof header);
  for (std::size_t k = 0; k < records * columns; ++k)
  {
    unsigned char value[8];
    io::detail::storeF64(value, fill);
    bytes.append(reinterpret_cast<char const *>(value), 8);
  }
  return bytes;
}

using HostPositions = Kokkos::View<double *[3], Kokkos::HostSpace>;
using HostValues = Kokkos::View<double *, Kokkos::HostSpace>;

/// Awkward values: negative zero, subnormal, extreme exponents, values with 17 significant
/// digits.
struct Sample
{
  HostPositions x{"kfmm::test::x", 5};
  HostValues q{"kfmm::test::q", 5};
  HostValues phi{"kfmm::test::phi", 5};
  HostPositions g{"kfmm::test::g", 5};

  Sample()
  {
    double const values[] = {0.1,
                             -0.0,
                             4.9406564584124654e-324,
                             1.7976931348623157e308,
                             -2.2250738585072014e-308,
                             1.0 / 3.0,
                             123456789.123456789,
                             -1e-300};
    int k = 0;
    for (std::size_t i = 0; i < 5; ++i)
    {
      for (int c = 0; c < 3; ++c)
      {
        x(i, c) = values[k++ % 8];
        g(i, c) = values[k++ % 8] * 0.5;
      }
      q(i) = values[k++ % 8];
      phi(i) = values[k++ % 8];
    }
  }
};

} // namespace

TEST_CASE("result files read back exactly in both formats", "[io]")
{
  ScratchFolder folder;
  Sample s;
  auto const name = GENERATE(std::string("results.csv"), std::string("results.kfmm"));
  std::string const path = folder.file(name);
  io::writeResults(path, s.x, s.q, s.phi, s.g);
  auto const table = io::readParticles(path);
  REQUIRE(table.columns == io::result_columns);
  REQUIRE(table.size() == 5);
  for (std::size_t i = 0; i < 5; ++i)
  {
    for (int c = 0; c < 3; ++c)
    {
      CHECK(table(i, c) == s.x(i, c));
      CHECK(std::signbit(table(i, c)) == std::signbit(s.x(i, c)));
      CHECK(table(i, 5 + c) == s.g(i, c));
    }
    CHECK(table(i, 3) == s.q(i));
    CHECK(table(i, 4) == s.phi(i));
  }
  // The table writer reproduces the same file.
  std::string const again = folder.file("again" + fs::path(name).extension().string());
  io::writeTable(again, table);
  CHECK(readBytes(again) == readBytes(path));
}

TEST_CASE("the binary format is laid out as documented", "[io]")
{
  ScratchFolder folder;
  HostPositions x("kfmm::test::x", 2);
  HostValues q("kfmm::test::q", 2);
  x(1, 2) = 1.0;
  q(0) = -2.0;
  std::string const path = folder.file("p.kfmm");
  io::writeParticles(path, x, q);
  std::string const bytes = readBytes(path);
  REQUIRE(bytes.size() == 24 + 2 * 4 * 8);
  CHECK(bytes.substr(0, 8) == "KFMMPART");
  auto const *b = reinterpret_cast<unsigned char const *>(bytes.data());
  CHECK(io::detail::loadU32(b + 8) == 1);                    // version
  CHECK(io::detail::loadU32(b + 12) == 4);                   // columns
  CHECK(io::detail::loadU64(b + 16) == 2);                   // records
  CHECK(io::detail::loadF64(b + 24 + 3 * 8) == -2.0);        // q of record 0
  CHECK(io::detail::loadF64(b + 24 + 4 * 8 + 2 * 8) == 1.0); // z of record 1
  // Little-endian: 1.0 is 0x3ff0000000000000, so its last byte comes last.
  CHECK(b[24 + 6 * 8 + 7] == 0x3f);
  CHECK(b[24 + 6 * 8 + 6] == 0xf0);
}

TEST_CASE("CSV numbers have the digits of their type", "[io]")
{
  ScratchFolder folder;
  Kokkos::View<float *[3], Kokkos::HostSpace> xf("kfmm::test::xf", 1);
  Kokkos::View<float *, Kokkos::HostSpace> qf("kfmm::test::qf", 1);
  xf(0, 0) = 0.1f;
  xf(0, 1) = -3.0f;
  xf(0, 2) = 1e-20f;
  qf(0) = 1.0f / 3.0f;
  std::string const path = folder.file("f.csv");
  io::writeParticles(path, xf, qf);
  CHECK(readBytes(path) == "x,y,z,q\n0.100000001,-3,9.99999968e-21,0.333333343\n");
  auto const table = io::readParticles(path);
  CHECK(static_cast<float>(table(0, 0)) == 0.1f);
  CHECK(static_cast<float>(table(0, 3)) == 1.0f / 3.0f);

  HostPositions xd("kfmm::test::xd", 1);
  HostValues qd("kfmm::test::qd", 1);
  xd(0, 0) = 0.1;
  qd(0) = 1.0 / 3.0;
  io::writeParticles(path, xd, qd);
  CHECK(readBytes(path) == "x,y,z,q\n0.10000000000000001,0,0,0.33333333333333331\n");
}

TEST_CASE("CSV files may have spaces, CRLF, a byte order mark and trailing blank lines", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("ok.csv");
  auto const text = GENERATE(
      std::string("x,y,z,q\n1,2,3,4\n-5e-1,+6.25,7E2,.5\n"),
      std::string("  x , y,z\t,q  \r\n 1 ,\t2,3,4\r\n-0.5,6.25,700,0.5\r\n"),
      std::string("\xEF\xBB\xBFx,y,z,q\n1,2,3,4\n-0.5,6.25,700,0.5"), // BOM, no final newline
      std::string("x,y,z,q\n1,2,3,4\n-0.5,6.25,700,0.5\n\n  \n\t\r\n\r\n"));
  writeBytes(path, text);
  auto const table = io::readParticles(path);
  REQUIRE(table.columns == 4);
  REQUIRE(table.size() == 2);
  CHECK(table(0, 0) == 1);
  CHECK(table(0, 3) == 4);
  CHECK(table(1, 0) == -0.5);
  CHECK(table(1, 1) == 6.25);
  CHECK(table(1, 2) == 700);
  CHECK(table(1, 3) == 0.5);
  CHECK(table.location(1) == "'" + path + "' line 3");
}

TEST_CASE("a header alone is an empty particle set", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("none.csv");
  writeBytes(path, "x,y,z,q\n");
  CHECK(io::readParticles(path).size() == 0);
  std::string const binary = folder.file("none.kfmm");
  writeBytes(binary, binaryFile(1, 4, 0, 0));
  CHECK(io::readParticles(binary).size() == 0);
}

TEST_CASE("bad CSV files name the file and the line", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("bad.csv");
  struct Case
  {
    char const *text;
    char const *where;
    char const *what;
  };
  auto const c = GENERATE(
      Case{"", "'", "empty file"}, Case{"\n \n\r\n", "'", "empty file"},
      Case{"x,y,q,z\n1,2,3,4\n", "line 1", "bad header 'x,y,q,z'"},
      Case{"x,y,z\n1,2,3\n", "line 1", "bad header"}, Case{"X,Y,Z,Q\n", "line 1", "bad header"},
      Case{"1,2,3,4\n", "line 1", "bad header"},
      Case{"x,y,z,q\n1,2,3,4\n1,abc,3,4\n", "line 3", "field 2 (y) 'abc' is not a number"},
      Case{"x,y,z,q\n1,2,3,4x\n", "line 2", "field 4 (q) '4x' is not a number"},
      Case{"x,y,z,q\n1,2,,4\n", "line 2", "field 3 (z) is empty"},
      Case{"x,y,z,q\n1,2,3 4,5\n", "line 2", "not a number"},
      Case{"x,y,z,q\n1,2,3\n", "line 2", "expected 4 fields (x,y,z,q), found 3"},
      Case{"x,y,z,q\n1,2,3,4,5\n", "line 2", "expected 4 fields (x,y,z,q), found 5"},
      Case{"x,y,z,q,phi,gx,gy,gz\n1,2,3,4\n", "line 2", "expected 8 fields"},
      Case{"x,y,z,q\n1,2,3,4\n1,2,nan,4\n", "line 3", "field 3 (z) 'nan' is NaN or infinite"},
      Case{"x,y,z,q\ninf,2,3,4\n", "line 2", "field 1 (x) 'inf' is NaN or infinite"},
      Case{"x,y,z,q\n1,2,3,-Infinity\n", "line 2", "NaN or infinite"},
      Case{"x,y,z,q\n1,2,1e999,4\n", "line 2", "out of the range of double"},
      Case{"x,y,z,q\n1,2,3,4\n\n5,6,7,8\n", "line 3", "blank line"},
      Case{"\nx,y,z,q\n1,2,3,4\n", "line 1", "blank line"},
      Case{"x,y,z,q\n\"1\",2,3,4\n", "line 2", "not a number"},
      Case{"x,y,z,q\n0x10,2,3,4\n", "line 2", "not a number"});
  writeBytes(path, c.text);
  CAPTURE(c.text);
  CHECK_THROWS_AS(io::readParticles(path), io::FileError);
  CHECK_THROWS_WITH(io::readParticles(path),
                    ContainsSubstring("kfmm::io::readParticles: '" + path + "'") &&
                        ContainsSubstring(c.where) && ContainsSubstring(c.what));
}

TEST_CASE("messages stay on one line whatever the file holds", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("binary.csv");
  writeBytes(path, "x,y,z,q\n1,\x01\x02\r\x7f\xff,3,4\n");
  try
  {
    io::readParticles(path);
    FAIL("no exception");
  }
  catch (io::FileError const &e)
  {
    std::string const message = e.what();
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find('\r') == std::string::npos);
    CHECK_THAT(message, ContainsSubstring("line 2") && ContainsSubstring("field 2 (y)"));
  }
}

TEST_CASE("a line longer than 1 MiB is refused", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("long.csv");
  writeBytes(path, "x,y,z,q\n" + std::string(std::size_t(1) << 21, '1'));
  CHECK_THROWS_WITH(io::readParticles(path),
                    ContainsSubstring("byte offset 8") && ContainsSubstring("longer than 1 MiB"));
}

TEST_CASE("bad binary files name the file and the byte offset", "[io]")
{
  ScratchFolder folder;
  std::string const path = folder.file("bad.kfmm");
  struct Case
  {
    std::string bytes;
    char const *where;
    char const *what;
  };
  std::string nan_record = binaryFile(1, 4, 3, 3);
  {
    unsigned char value[8];
    io::detail::storeF64(value, std::numeric_limits<double>::quiet_NaN());
    nan_record.replace(24 + 32 + 8, 8, reinterpret_cast<char const *>(value), 8); // record 1, y
  }
  std::string wrong_magic = binaryFile(1, 4, 1, 1);
  wrong_magic[3] = 'X';
  auto const c = GENERATE_COPY(
      Case{"", "'", "empty file"},
      Case{"x,y,z,q\n1,2,3,4\n", "byte offset 0", "bad magic 'x,y,z,q?' (expected 'KFMMPART')"},
      Case{wrong_magic, "byte offset 0", "bad magic 'KFMXPART'"},
      Case{"KFMMPA", "byte offset 6", "truncated header (6 of 24 bytes)"},
      Case{binaryFile(1, 4, 1, 1).substr(0, 20), "byte offset 20", "truncated header"},
      Case{binaryFile(2, 4, 1, 1), "byte offset 8", "unsupported version 2 (expected 1)"},
      Case{binaryFile(1, 5, 1, 1), "byte offset 12", "unsupported column count 5"},
      Case{binaryFile(1, 4, 3, 3).substr(0, 24 + 2 * 32 + 12), "byte offset 100",
           "truncated in record 2"},
      Case{binaryFile(1, 8, 2, 1), "byte offset 88", "truncated in record 1"},
      Case{binaryFile(1, 4, 3, 4), "byte offset 16",
           "count mismatch: the header promises 3 records"},
      Case{binaryFile(1, 4, 1, 1) + "x", "byte offset 16", "count mismatch"},
      Case{binaryFile(1, 4, std::uint64_t(1) << 50, 1), "byte offset 56", "truncated in record 1"},
      Case{binaryFile(1, 8, ~std::uint64_t(0), 0), "byte offset 16", "impossibly large"},
      Case{nan_record, "record 1 (byte offset 64)", "column 'y' is NaN or infinite"});
  writeBytes(path, c.bytes);
  CAPTURE(c.where, c.what);
  CHECK_THROWS_AS(io::readParticles(path), io::FileError);
  CHECK_THROWS_WITH(io::readParticles(path),
                    ContainsSubstring("kfmm::io::readParticles: '" + path + "'") &&
                        ContainsSubstring(c.where) && ContainsSubstring(c.what));
}

TEST_CASE("missing files, folders and unknown extensions", "[io]")
{
  ScratchFolder folder;
  CHECK_THROWS_WITH(io::readParticles(folder.file("missing.csv")),
                    ContainsSubstring("cannot open '" + folder.file("missing.csv") + "'") &&
                        ContainsSubstring("No such file"));
  fs::create_directories(folder.file("dir.csv"));
  CHECK_THROWS_WITH(io::readParticles(folder.file("dir.csv")), ContainsSubstring("is a directory"));
  CHECK_THROWS_WITH(io::readParticles(folder.file("p.txt")),
                    ContainsSubstring("unknown file extension '.txt'"));
  CHECK_THROWS_WITH(io::readParticles(folder.file("p")),
                    ContainsSubstring("unknown file extension (expected .csv or .kfmm)"));

  CHECK(io::formatOf("A.CSV") == io::Format::csv);
  CHECK(io::formatOf("dir.csv/p.Kfmm") == io::Format::binary);
  CHECK(io::formatOf("p.txt", io::Format::csv) == io::Format::csv);

  // An explicit format reads a file whatever its name.
  writeBytes(folder.file("p.dat"), "x,y,z,q\n1,2,3,4\n");
  io::ReadOptions options;
  options.format = io::Format::csv;
  CHECK(io::readParticles(folder.file("p.dat"), options).size() == 1);
}

TEST_CASE("a failed write leaves nothing behind", "[io]")
{
  ScratchFolder folder;
  Sample s;
  CHECK_THROWS_AS(io::writeResults(folder.file("missing/r.csv"), s.x, s.q, s.phi, s.g),
                  io::FileError);
  CHECK_THROWS_WITH(io::writeResults(folder.file("missing/r.csv"), s.x, s.q, s.phi, s.g),
                    ContainsSubstring("cannot create '" + folder.file("missing/r.csv") + "'"));
  CHECK_THROWS_WITH(io::writeResults(folder.file("r.txt"), s.x, s.q, s.phi, s.g),
                    ContainsSubstring("kfmm::io::writeResults: '" + folder.file("r.txt") +
                                      "': unknown file extension"));
  HostValues short_q("kfmm::test::short_q", 4);
  CHECK_THROWS_WITH(io::writeResults(folder.file("r.csv"), s.x, short_q, s.phi, s.g),
                    ContainsSubstring("'charges' has extent 4, expected 5"));
  // A successful write leaves exactly the file: the temporary name is gone.
  io::writeResults(folder.file("r.csv"), s.x, s.q, s.phi, s.g);
  std::size_t files = 0;
  for (auto const &entry : fs::directory_iterator(folder.path))
  {
    CHECK(entry.path().filename() == "r.csv");
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("large files round-trip and report progress", "[io]")
{
  ScratchFolder folder;
  std::size_t const n = 100000;
  HostPositions x("kfmm::test::x", n);
  HostValues q("kfmm::test::q", n);
  for (std::size_t i = 0; i < n; ++i)
  {
    x(i, 0) = std::sin(static_cast<double>(i));
    x(i, 1) = std::cos(static_cast<double>(i)) * 1e-7;
    x(i, 2) = static_cast<double>(i) * 1e5;
    q(i) = 1.0 / static_cast<double>(i + 1);
  }
  for (std::string const name : {"big.csv", "big.kfmm"})
  {
    std::string const path = folder.file(name);
    io::WriteOptions write;
    write.progress_bytes = 1; // exercise the progress path (quiet off a terminal)
    io::writeParticles(path, x, q, write);
    io::ReadOptions read;
    read.progress_bytes = 1;
    auto const table = io::readParticles(path, read);
    REQUIRE(table.size() == n);
    bool exact = true;
    for (std::size_t i = 0; i < n; ++i)
      exact = exact && table(i, 0) == x(i, 0) && table(i, 1) == x(i, 1) && table(i, 2) == x(i, 2) &&
              table(i, 3) == q(i);
    CHECK(exact);
  }
}

TEMPLATE_LIST_TEST_CASE("a table is copied to Views of any space and precision", "[io]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  io::ParticleTable table;
  table.path = "t.csv";
  table.values = {1, 2, 3, 0.5, -1, -2, -3, 0.25};
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", 2);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", 2);
  io::copyToViews(table, x, q);
  auto const xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  auto const qh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
  CHECK(xh(0, 2) == Real(3));
  CHECK(xh(1, 0) == Real(-1));
  CHECK(qh(1) == Real(0.25));

  Kokkos::View<Real *, Memory> q3("kfmm::test::q3", 3);
  CHECK_THROWS_WITH(io::copyToViews(table, x, q3),
                    ContainsSubstring("'charges' has extent 3, expected 2"));

  table.values[5] = 1e300;
  if (std::is_same<Real, float>::value)
    CHECK_THROWS_WITH(io::copyToViews(table, x, q),
                      ContainsSubstring("'t.csv' line 3: y = 1e+300 does not fit in float"));
  else
    CHECK_NOTHROW(io::copyToViews(table, x, q));
  // Every digit of the file's value, where %g would say 3.40282e+38, below float's maximum.
  table.values[5] = 3.4028235677973366e38;
  if (std::is_same<Real, float>::value)
    CHECK_THROWS_WITH(io::copyToViews(table, x, q),
                      ContainsSubstring("'t.csv' line 3: y = 3.4028235677973366e+38 does not fit"));
}
