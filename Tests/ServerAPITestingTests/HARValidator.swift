import Foundation

/// Checks a HAR file against HAR 1.2's required fields (log, creator, entries, request, response, content,
/// cache, timings, name/value pairs), with their JSON types; returns what is wrong, empty when nothing is.
enum HARValidator {
    static func problems(_ data: Data) -> [String] {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return ["the file is not a JSON object"]
        }
        var problems: [String] = []
        func require(_ object: [String: Any], _ key: String, _ type: String, _ at: String) {
            guard let value = object[key] else { return problems.append("\(at).\(key) is missing") }
            let ok: Bool
            switch type {
            case "string": ok = value is String
            case "number": ok = value is NSNumber || value is Int || value is Double
            case "object": ok = value is [String: Any]
            case "array": ok = value is [Any]
            default: ok = false
            }
            if !ok { problems.append("\(at).\(key) is not a \(type)") }
        }
        func pairs(_ object: [String: Any], _ key: String, _ at: String) {
            require(object, key, "array", at)
            for (index, pair) in ((object[key] as? [[String: Any]]) ?? []).enumerated() {
                require(pair, "name", "string", "\(at).\(key)[\(index)]")
                require(pair, "value", "string", "\(at).\(key)[\(index)]")
            }
        }
        require(root, "log", "object", "")
        guard let log = root["log"] as? [String: Any] else { return problems }
        require(log, "version", "string", "log")
        if log["version"] as? String != "1.2" { problems.append("log.version is not 1.2") }
        require(log, "creator", "object", "log")
        if let creator = log["creator"] as? [String: Any] {
            require(creator, "name", "string", "log.creator")
            require(creator, "version", "string", "log.creator")
        }
        require(log, "entries", "array", "log")
        for (index, entry) in ((log["entries"] as? [[String: Any]]) ?? []).enumerated() {
            let at = "log.entries[\(index)]"
            require(entry, "startedDateTime", "string", at)
            if let date = entry["startedDateTime"] as? String, Self.date(date) == nil {
                problems.append("\(at).startedDateTime is not ISO 8601: \(date)")
            }
            require(entry, "time", "number", at)
            require(entry, "cache", "object", at)
            require(entry, "request", "object", at)
            if let request = entry["request"] as? [String: Any] {
                for key in ["method", "url", "httpVersion"] { require(request, key, "string", "\(at).request") }
                pairs(request, "headers", "\(at).request")
                pairs(request, "queryString", "\(at).request")
                pairs(request, "cookies", "\(at).request")
                require(request, "headersSize", "number", "\(at).request")
                require(request, "bodySize", "number", "\(at).request")
                if let postData = request["postData"] as? [String: Any] {
                    require(postData, "mimeType", "string", "\(at).request.postData")
                }
            }
            require(entry, "response", "object", at)
            if let response = entry["response"] as? [String: Any] {
                require(response, "status", "number", "\(at).response")
                for key in ["statusText", "httpVersion", "redirectURL"] {
                    require(response, key, "string", "\(at).response")
                }
                pairs(response, "headers", "\(at).response")
                pairs(response, "cookies", "\(at).response")
                require(response, "headersSize", "number", "\(at).response")
                require(response, "bodySize", "number", "\(at).response")
                require(response, "content", "object", "\(at).response")
                if let content = response["content"] as? [String: Any] {
                    require(content, "size", "number", "\(at).response.content")
                    require(content, "mimeType", "string", "\(at).response.content")
                }
            }
            require(entry, "timings", "object", at)
            if let timings = entry["timings"] as? [String: Any] {
                for key in ["send", "wait", "receive"] {
                    require(timings, key, "number", "\(at).timings")
                    if let value = timings[key] as? Double, value < 0 {
                        problems.append("\(at).timings.\(key) is negative")
                    }
                }
            }
        }
        return problems
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
