/// Implements the generated API protocol; each handler decodes, authorises, calls one service, encodes. The
/// operations live with their features, in `<Feature>/API/APIHandler+<Feature>.swift`.
struct APIHandler: APIProtocol {}
