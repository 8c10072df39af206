import Foundation

exit(await Sapi.main(Array(CommandLine.arguments.dropFirst())))
