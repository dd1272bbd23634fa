// posenc: command-line front end of the library (info, rope, freqs, sinusoidal, demo, bench).
//
// Failure contract: whatever goes wrong (bad arguments, bad or hostile files, a library error,
// out of memory, a failed write), the tool prints one line "posenc: error: ..." on stderr and
// exits with code 2, having written no output file.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "CLI/CLI.hpp"
#include "posenc/targets.h"
#include "tools/posenc/cli.h"

namespace {

// The message on one line: control characters (a newline in a file name, a multi-line library
// message) become spaces.
int Fail(const char* what) {
  std::string line = what;
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  std::fprintf(stderr, "posenc: error: %s\n", line.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"posenc: SIMD positional encodings (RoPE, sinusoidal) on the CPU"};
    app.require_subcommand(1);
    // The linked library's version (posenc info prints it too, with the SIMD targets).
    app.set_version_flag("--version", std::string("posenc ") + posenc::Version());
    posenc::cli::AddInfo(app);
    posenc::cli::AddRope(app);
    posenc::cli::AddDemo(app);
    posenc::cli::AddFreqs(app);
    posenc::cli::AddSinusoidal(app);
    posenc::cli::AddRerope(app);
    posenc::cli::AddVisionRope(app);
#ifdef POSENC_CLI_WITH_BENCH
    posenc::cli::AddBench(app);
#endif
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    }
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  } catch (const std::bad_alloc&) {
    return Fail("out of memory");
  } catch (const std::exception& e) {
    return Fail(e.what());
  } catch (...) {
    return Fail("unexpected exception");
  }
  return 0;
}
