/// The version of ServerAPIKit, as in its CHANGELOG: part of the `User-Agent` every transport sends by default
/// (see `HTTPHeaders.defaultUserAgent`).
public let serverAPIKitVersion = "0.1.0"
