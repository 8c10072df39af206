import Testing
@testable import ServerAPIKit
