// lowbit: the command-line program. Subcommands register themselves (command.h).
#include <algorithm>
#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>  // the App's formatter and config reader: here only (command.h)

#include "command.h"
#include "core/error.h"

namespace lowbit::tools {

std::vector<Command>& command_registry() {
  static std::vector<Command> commands;
  return commands;
}

}  // namespace lowbit::tools

int main(int argc, char** argv) {
  using namespace lowbit::tools;
  CLI::App app{"lowbit: 1-bit, ternary, 2-bit and 4-bit LLM inference on CPUs"};
  app.require_subcommand(1);
  auto& commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  std::map<CLI::App*, CommandMain> mains;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    mains[sub] = c.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (auto& [sub, run] : mains)
      if (sub->parsed()) return run();
  } catch (const lowbit::Error& e) {
    std::fprintf(stderr, "lowbit: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "lowbit: error: out of memory\n");
    return 1;
  }
  return 1;
}
