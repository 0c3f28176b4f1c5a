import Logging

/// How the server writes its log lines (`log.format`).
public enum LogFormat: String, Sendable {
    /// swift-log's readable line: time, level, label, metadata, message.
    case text
    /// One JSON object a line (`JSONLogHandler`), for log shippers.
    case json

    /// A handler of this format writing to standard error at `level`. Every line carries what `metadataProvider`
    /// supplies (the request id of the request being served: `RequestID.metadataProvider`).
    public func standardErrorHandler(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label, output: .standardError, metadataProvider: metadataProvider)
            handler.logLevel = level
            return handler
        }
    }
}
