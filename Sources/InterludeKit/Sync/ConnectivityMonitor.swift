#if canImport(Network)
    import Dispatch
    import Network

    /// Tells a sync engine when the network comes and goes, so changes made offline leave as soon as they can.
    public final class ConnectivityMonitor: @unchecked Sendable {
        private let monitor = NWPathMonitor()

        public init(engine: SyncEngine) {
            monitor.pathUpdateHandler = { path in
                let online = path.status == .satisfied
                Task { await engine.connectivityChanged(online: online) }
            }
            monitor.start(queue: DispatchQueue(label: "org.interlude.connectivity"))
        }

        deinit {
            monitor.cancel()
        }
    }
#endif
