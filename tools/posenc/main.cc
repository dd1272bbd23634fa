// posenc: command-line front end of the library (info, rope, freqs, sinusoidal, demo, bench).
#include <cstdio>
#include <exception>

#include "CLI/CLI.hpp"
#include "tools/posenc/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"posenc: SIMD positional encodings (RoPE, sinusoidal) on the CPU"};
  app.require_subcommand(1);
  posenc::cli::AddInfo(app);
  posenc::cli::AddRope(app);
  posenc::cli::AddDemo(app);
  posenc::cli::AddFreqs(app);
  posenc::cli::AddSinusoidal(app);
  posenc::cli::AddRerope(app);
#ifdef POSENC_CLI_WITH_BENCH
  posenc::cli::AddBench(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "posenc: error: %s\n", e.what());
    return 2;
  } catch (const posenc::cli::UsageError& e) {
    std::fprintf(stderr, "posenc: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posenc: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
